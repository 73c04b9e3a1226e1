package bankingsim

import (
	"net/http"
	"strings"
)

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

// readNewPasswordLocked validates password, confirm_password and, for a
// person changing their own password, current_password. It returns the new
// hash or nil.
func (s *Sim) readNewPasswordLocked(e *errs, b body, p *person, needCurrent bool) []byte {
	pw, pwOK := b.str(e, "", "password")
	confirm, _ := b.str(e, "", "confirm_password")
	current, _ := b.str(e, "", "current_password")
	if !pwOK {
		if b.has("confirm_password") && !hasField(*e, "confirm_password") {
			e.required("password")
		}
		return nil
	}
	checkPassword(e, "password", pw)
	if confirm == "" && !hasField(*e, "confirm_password") {
		e.required("confirm_password")
	} else if confirm != pw {
		e.invalid("confirm_password", "passwords do not match")
	}
	if needCurrent {
		if current == "" && !hasField(*e, "current_password") {
			e.required("current_password")
		} else if current != "" && !passwordOK(p.hash, current) {
			e.invalid("current_password", "current password is wrong")
		}
	}
	if len(*e) > 0 {
		return nil
	}
	return hashPassword(pw)
}
