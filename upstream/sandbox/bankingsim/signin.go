package bankingsim

import "net/http"

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

func wrongCredentials(w http.ResponseWriter) {
	unauthorized(w, "password", "invalid e-mail or password")
}

// account is what an e-mail and password sign-in needs to know of whoever
// signs in, whichever kind of principal it is.
type account struct {
	principal principal
	subject   string // two-factor subject, "<kind>:<id>"
	hash      []byte
	phone     string
	twoFA     bool
	rule      attemptRule
	blocked   bool   // refused with 403 once the password is right
	onSuccess func() // runs under s.mu when every check passed; may be nil
}

// passwordSignIn is the sign-in staff, introducers and persons share:
// credentials, then the password, then the blocked check, then the SMS
// second factor when the account has it, then a new token chain. find runs
// under s.mu and returns nil for an unknown e-mail; extra names the body
// fields a kind takes beyond the common ones.
func (s *Sim) passwordSignIn(w http.ResponseWriter, r *http.Request, b body, find func(email string) *account, extra ...string) {
	email, password, ok := credentials(w, b, extra...)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := find(email)
	if a == nil || !passwordOK(a.hash, password) {
		wrongCredentials(w)
		return
	}
	if a.blocked {
		forbidden(w, "", "person is blocked")
		return
	}
	if a.twoFA {
		if _, ok := s.secondFactor(w, r, b, a.subject, a.phone, a.rule); !ok {
			return
		}
	}
	if a.onSuccess != nil {
		a.onSuccess()
	}
	s.signedIn(w, a.principal)
}

func (s *Sim) staffSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.passwordSignIn(w, r, b, func(email string) *account {
		for _, st := range s.staff {
			if st.Email == email {
				return &account{principal: principal{kind: kindStaff, id: st.ID}, subject: "staff:" + st.ID,
					hash: st.hash, phone: st.Phone, twoFA: st.Is2FA, rule: staffAttempts}
			}
		}
		return nil
	})
}

// introducerSignIn always asks for the second factor: the spec lists the
// code as part of every introducer sign-in.
func (s *Sim) introducerSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.passwordSignIn(w, r, b, func(email string) *account {
		for _, in := range s.introducers {
			if in.Email == email {
				return &account{principal: principal{kind: kindIntroducer, id: in.ID}, subject: "introducer:" + in.ID,
					hash: in.hash, phone: in.Phone, twoFA: true, rule: introducerAttempts}
			}
		}
		return nil
	})
}

// personSignIn checks the device fingerprint first: without it no
// credentials are looked at. A successful sign-in remembers the fingerprint.
func (s *Sim) personSignIn(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
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
	s.passwordSignIn(w, r, b, func(email string) *account {
		p := s.personByEmailLocked(email)
		if p == nil {
			return nil
		}
		return &account{principal: principal{kind: kindPerson, id: p.ID, corpID: p.CorpID}, subject: "person:" + p.ID,
			hash: p.hash, phone: p.Phone, twoFA: p.Is2FA, rule: personAttempts, blocked: p.DeletedAt != nil,
			onSuccess: func() { p.addFingerprint(fp) }}
	}, "fp_client_data")
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
