package bankingsim

import (
	"net/http"

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
