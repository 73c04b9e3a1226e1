package bankingsim

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
)

// attemptRule is when a run of wrong two-factor codes gives the expired
// message (Authentication rule 3). For persons (and staff, our choice) the
// third failure says "code expired" and kills the code, later tries say
// "invalid code" again; for introducers every failure from the fifth on says
// "code expired".
type attemptRule struct {
	expireAt int
	sticky   bool
}

var (
	personAttempts     = attemptRule{expireAt: 3}
	staffAttempts      = attemptRule{expireAt: 3}
	introducerAttempts = attemptRule{expireAt: 5, sticky: true}
)

const (
	msgInvalidCode = "invalid code"
	msgCodeExpired = "code expired"
)

// secondFactor runs the two-factor step for subject. It returns the used
// challenge and true when
// the request carried the right code; otherwise it has answered: a new code
// (first call) or an error. s.mu must be held.
func (s *Sim) secondFactor(w http.ResponseWriter, r *http.Request, b body, subject, phone string, rule attemptRule) (*challenge, bool) {
	var e errs
	code, _ := b.str(&e, "", "two_fa_code")
	var challengeID string
	if ch, ok := b.object(&e, "", "challenge"); ok {
		if tf, ok := ch.object(&e, "challenge.", "two_fa"); ok {
			challengeID, _ = tf.str(&e, "challenge.two_fa.", "challenge_id")
			if c, ok := tf.str(&e, "challenge.two_fa.", "two_fa_code"); ok && c != "" {
				code = c
			}
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return nil, false
	}
	if code == "" {
		s.issueChallengeLocked(w, r, subject, phone, "")
		return nil, false
	}
	c := s.challenges[s.active[subject]]
	if c == nil || (challengeID != "" && challengeID != c.ID) {
		badRequest(w, fieldErr("code", msgInvalidCode, CodeInvalid))
		return nil, false
	}
	if c.dead {
		if rule.sticky {
			badRequest(w, fieldErr("code", msgCodeExpired, CodeExpired))
		} else {
			badRequest(w, fieldErr("code", msgInvalidCode, CodeInvalid))
		}
		return nil, false
	}
	if s.now().After(c.issuedAt.Add(CodeTTL)) {
		c.dead = true
		badRequest(w, fieldErr("code", msgCodeExpired, CodeExpired))
		return nil, false
	}
	if code == c.code {
		delete(s.challenges, c.ID)
		delete(s.active, subject)
		return c, true
	}
	c.fails++
	if c.fails >= rule.expireAt {
		c.dead = true
		badRequest(w, fieldErr("code", msgCodeExpired, CodeExpired))
		return nil, false
	}
	badRequest(w, fieldErr("code", msgInvalidCode, CodeInvalid))
	return nil, false
}

// issueChallengeLocked sends a new code by SMS, replacing any pending one of
// the subject (which resets the failure count), and answers in the shape of
// the request's API version.
func (s *Sim) issueChallengeLocked(w http.ResponseWriter, r *http.Request, subject, phone, newPhone string) {
	if old, ok := s.active[subject]; ok {
		delete(s.challenges, old)
	}
	now := s.now()
	c := &challenge{ID: uuid.NewString(), subject: subject, code: sixDigits(), issuedAt: now, newPhone: newPhone}
	s.challenges[c.ID] = c
	s.active[subject] = c.ID
	to := phone
	if newPhone != "" {
		to = newPhone
	}
	s.sendSMSLocked(to, "Your verification code is "+c.code+". It expires in 5 minutes.", c.code)
	if versionOf(r) >= 3 {
		writeJSON(w, http.StatusOK, map[string]any{"challenge": map[string]any{"two_fa": map[string]any{
			"truncated_phone_number": truncatePhone(to),
			"code_issued_timestamp":  now.Unix(),
			"code_expiration_sec":    int(CodeTTL.Seconds()),
			"challenge_id":           c.ID,
		}}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"truncated_phone_number": truncatePhone(to), "two_fa_code": ""})
}

// signedIn answers a successful sign-in with a new token chain.
func (s *Sim) signedIn(w http.ResponseWriter, p principal) {
	tok := s.issueTokenLocked(p, "")
	w.Header().Set(TokenHeader, tok)
	writeJSON(w, http.StatusOK, map[string]any{"token": tok})
}

var signInFields = []string{"email", "password", "two_fa_code", "challenge"}

// credentials reads the e-mail and password every sign-in needs.
func credentials(w http.ResponseWriter, b body, extra ...string) (email, password string, ok bool) {
	var e errs
	email, _ = b.str(&e, "", "email")
	password, _ = b.str(&e, "", "password")
	if email == "" && len(e) == 0 {
		e.required("email")
	}
	if password == "" && !hasField(e, "password") {
		e.required("password")
	}
	b.unknown(&e, "", append(signInFields, extra...)...)
	if len(e) > 0 {
		badRequest(w, e...)
		return "", "", false
	}
	return normEmail(email), password, true
}

func hasField(e errs, f string) bool {
	for _, x := range e {
		if x.Field == f {
			return true
		}
	}
	return false
}

func wrongCredentials(w http.ResponseWriter) {
	unauthorized(w, "password", "invalid e-mail or password")
}

func (s *Sim) staffSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	email, password, ok := credentials(w, b)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *staffMember
	for _, x := range s.staff {
		if x.Email == email {
			st = x
		}
	}
	if st == nil || !passwordOK(st.hash, password) {
		wrongCredentials(w)
		return
	}
	if st.Is2FA && !passed(s.secondFactor(w, r, b, "staff:"+st.ID, st.Phone, staffAttempts)) {
		return
	}
	s.signedIn(w, principal{kind: kindStaff, id: st.ID})
}

func (s *Sim) introducerSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	email, password, ok := credentials(w, b)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var in *introducer
	for _, x := range s.introducers {
		if x.Email == email {
			in = x
		}
	}
	if in == nil || !passwordOK(in.hash, password) {
		wrongCredentials(w)
		return
	}
	// Introducers always use two-factor (the spec lists the code as part of
	// their sign-in).
	if !passed(s.secondFactor(w, r, b, "introducer:"+in.ID, in.Phone, introducerAttempts)) {
		return
	}
	s.signedIn(w, principal{kind: kindIntroducer, id: in.ID})
}

func (s *Sim) personSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	// The device fingerprint is checked first: without it no credentials are
	// looked at.
	var e errs
	const fpField = "fp_client_data.identifiers.id_fingerprint"
	var fp float64
	var fpOK bool
	if fpd, ok := b.object(&e, "", "fp_client_data"); ok {
		if ids, ok := fpd.object(&e, "fp_client_data.", "identifiers"); ok {
			fp, fpOK = ids.number(&e, "fp_client_data.identifiers.", "id_fingerprint")
		}
	}
	if !fpOK && len(e) == 0 {
		e.required(fpField)
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	email, password, ok := credentials(w, b, "fp_client_data")
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.personByEmailLocked(email)
	if p == nil || !passwordOK(p.hash, password) {
		wrongCredentials(w)
		return
	}
	if p.DeletedAt != nil {
		forbidden(w, "", "person is blocked")
		return
	}
	if p.Is2FA && !passed(s.secondFactor(w, r, b, "person:"+p.ID, p.Phone, personAttempts)) {
		return
	}
	p.addFingerprint(fp)
	s.signedIn(w, principal{kind: kindPerson, id: p.ID, corpID: p.CorpID})
}

func (s *Sim) apiSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	key, _ := b.str(&e, "", "apiKey")
	if key == "" && len(e) == 0 {
		e.required("apiKey")
	}
	b.unknown(&e, "", "apiKey")
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := keyHash(key)
	for _, k := range s.apiKeys {
		if k.hash == h && k.IsActive {
			s.signedIn(w, principal{kind: kindAPI, id: k.ID, corpID: k.CorpID})
			return
		}
	}
	unauthorized(w, "apiKey", "invalid API key")
}

// forgotPassword always answers {} so that it cannot tell which e-mails
// exist; a known, active person gets a recovery token by e-mail.
func (s *Sim) forgotPassword(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	email, _ := b.str(&e, "", "email")
	if strings.TrimSpace(email) == "" && len(e) == 0 {
		e.required("email")
	}
	b.unknown(&e, "", "email")
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.personByEmailLocked(normEmail(email)); p != nil && p.DeletedAt == nil {
		tok := s.newRecoveryLocked(p.ID)
		s.sendEmailLocked(p.Email, "Reset your password: https://sandbox.invalid/recover?token="+tok, tok)
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Sim) newRecoveryLocked(personID string) string {
	tok := randomToken("rec_")
	s.recoveries[tok] = &recovery{personID: personID, expires: s.now().Add(RecoveryTTL)}
	return tok
}

// recoverPassword sets a new password with a recovery or invitation token;
// each token works once.
func (s *Sim) recoverPassword(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	password, _ := b.str(&e, "", "password")
	token, _ := b.str(&e, "", "token")
	if password == "" && !hasField(e, "password") {
		e.required("password")
	} else if password != "" {
		checkPassword(&e, "password", password)
	}
	if token == "" && !hasField(e, "token") {
		e.required("token")
	}
	b.unknown(&e, "", "password", "token")
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.recoveries[token]
	if rec == nil || rec.used || s.now().After(rec.expires) || s.persons[rec.personID] == nil {
		badRequest(w, fieldErr("token", "invalid or used token", CodeInvalid))
		return
	}
	rec.used = true
	p := s.persons[rec.personID]
	p.hash = hashPassword(password)
	p.IsInvitationAccepted = true
	p.UpdatedAt = s.now()
	writeJSON(w, http.StatusOK, map[string]any{})
}

// checkPassword: at least 8 characters; bcrypt takes at most 72 bytes.
func checkPassword(e *errs, field, pw string) {
	if len([]rune(pw)) < 8 || len(pw) > 72 {
		e.invalid(field, field+" must be 8 to 72 characters")
	}
}

func passed(_ *challenge, ok bool) bool { return ok }
