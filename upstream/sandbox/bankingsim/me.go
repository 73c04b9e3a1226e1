package bankingsim

import (
	"net/http"
)

// getMe answers the signed-in person with its permissions. Only persons
// have a "me": staff, introducers and API clients get 403.
func (s *Sim) getMe(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	if pr.kind != kindPerson {
		forbidden(w, "", "only persons have a profile here")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.persons[pr.id]
	m := s.personJSONLocked(p, pr)
	m["permissions"] = p.permissions()
	writeJSON(w, http.StatusOK, m)
}

var meFields = []string{"is_ubo", "is_director", "gender", "phone", "other_phone", "is_questionnaire_filled",
	"political_institution", "position_in_political_institution", "roles", "current_password", "password",
	"confirm_password"}

// updateMe changes the signed-in person. A body with phone is step 1 of a
// phone change (phone and current_password only): it sends a code to the
// new phone. A body with two_fa_code (or, on v3, challenge.two_fa) is step
// 2: the right code moves the phone. Anything else is an ordinary update.
func (s *Sim) updateMe(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if pr.kind != kindPerson {
		forbidden(w, "", "only persons have a profile here")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.persons[pr.id]
	switch {
	case b.has("two_fa_code") || b.has("challenge"):
		s.confirmPhoneChangeLocked(w, r, b, p)
	case b.has("phone"):
		s.startPhoneChangeLocked(w, r, b, p)
	default:
		s.updateMeFieldsLocked(w, b, p, pr)
	}
}

// phoneSubject is the two-factor subject of a person's phone change, apart
// from their sign-in code.
func phoneSubject(p *person) string { return "phone:" + p.ID }

// startPhoneChangeLocked is step 1: with the current password right, a code
// goes to the new phone.
func (s *Sim) startPhoneChangeLocked(w http.ResponseWriter, r *http.Request, b body, p *person) {
	var e errs
	b.unknown(&e, "", "phone", "current_password")
	phone, _ := b.str(&e, "", "phone")
	current, _ := b.str(&e, "", "current_password")
	if phone == "" && !hasField(e, "phone") {
		e.required("phone")
	} else if phone != "" {
		checkPhone(&e, "phone", phone)
	}
	if current == "" && !hasField(e, "current_password") {
		e.required("current_password")
	} else if current != "" && !passwordOK(p.hash, current) {
		e.invalid("current_password", "current password is wrong")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.issueChallengeLocked(w, r, phoneSubject(p), p.Phone, phone)
}

// confirmPhoneChangeLocked is step 2. The spec's v3 rule: the client repeats
// the original request (phone, current_password) with all its fields plus
// challenge.two_fa; the repeated fields are accepted, and a repeated
// password must be right.
func (s *Sim) confirmPhoneChangeLocked(w http.ResponseWriter, r *http.Request, b body, p *person) {
	var e errs
	b.unknown(&e, "", "two_fa_code", "challenge", "phone", "current_password")
	if current, ok := b.str(&e, "", "current_password"); ok && !passwordOK(p.hash, current) {
		e.invalid("current_password", "current password is wrong")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	code, _ := b.str(&e, "", "two_fa_code")
	if ch, ok := b.object(&e, "", "challenge"); ok {
		if tf, ok := ch.object(&e, "challenge.", "two_fa"); ok {
			if c, _ := tf.str(&e, "challenge.two_fa.", "two_fa_code"); c != "" {
				code = c
			}
		}
	}
	if code == "" && len(e) == 0 {
		e.required("two_fa_code")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	c, ok := s.secondFactor(w, r, b, phoneSubject(p), p.Phone, personAttempts)
	if !ok {
		return
	}
	pr := principalOf(r)
	p.Phone = c.newPhone
	p.UpdatedAt = s.now()
	p.UpdatedBy = s.actorLocked(pr)
	writeJSON(w, http.StatusOK, s.personJSONLocked(p, pr))
}

// updateMeFieldsLocked is the ordinary update: the fields a person may
// change of themselves, and their password with the current one.
func (s *Sim) updateMeFieldsLocked(w http.ResponseWriter, b body, p *person, pr principal) {
	var e errs
	b.unknown(&e, "", meFields...)
	np := *p
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"is_ubo", &np.IsUBO}, {"is_director", &np.IsDirector}, {"is_questionnaire_filled", &np.IsQuestionnaireFilled}} {
		if v, ok := b.boolean(&e, "", f.name); ok {
			*f.dst = v
		}
	}
	if v, ok := b.str(&e, "", "gender"); ok {
		oneOf(&e, "gender", v, genders...)
		np.Gender = v
	}
	for _, f := range []string{"other_phone", "political_institution", "position_in_political_institution"} {
		if v, ok := b.str(&e, "", f); ok {
			np.setString(f, v)
		}
	}
	if v, ok := b.strings(&e, "", "roles"); ok {
		np.Roles = v
	}
	if np.Type == TypeConsumer {
		np.IsUBO, np.IsDirector, np.Roles = false, false, nil
	}
	if b.has("current_password") && !b.has("password") {
		e.required("password")
	}
	newHash := s.readNewPasswordLocked(&e, b, p, true)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if newHash != nil {
		np.hash = newHash
	}
	np.UpdatedAt = s.now()
	np.UpdatedBy = s.actorLocked(pr)
	*p = np
	writeJSON(w, http.StatusOK, s.personJSONLocked(p, pr))
}
