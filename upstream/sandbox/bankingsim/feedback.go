package bankingsim

import (
	"net/http"
	"strings"
)

// CaptchaTestToken is the one captcha response the sandbox accepts.
const CaptchaTestToken = "sandbox-captcha-ok"

// checkCaptcha accepts the captcha response as "captcha" (our contract) or
// "recaptcha" (the spec's name). Only CaptchaTestToken passes; an error
// names the field the client used ("captcha" when it sent neither).
func checkCaptcha(e *errs, b body) bool {
	field := "captcha"
	if !b.has("captcha") && b.has("recaptcha") {
		field = "recaptcha"
	}
	v, _ := b.str(e, "", field)
	if len(*e) > 0 {
		return false
	}
	if v != CaptchaTestToken {
		e.invalid(field, "captcha verification failed")
		return false
	}
	return true
}

// postFeedback stores feedback from anyone who passes the captcha. The
// sample's password field is accepted and ignored.
func (s *Sim) postFeedback(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	if !checkCaptcha(&e, b) {
		badRequest(w, e...)
		return
	}
	b.unknown(&e, "", "name", "email", "subject", "feedback", "captcha", "recaptcha", "password")
	fb := map[string]any{}
	for _, f := range []string{"name", "email", "subject", "feedback"} {
		v, _ := b.str(&e, "", f)
		if strings.TrimSpace(v) == "" && !hasField(e, f) {
			e.required(f)
		}
		fb[f] = v
	}
	if v, _ := fb["email"].(string); v != "" {
		checkEmail(&e, "email", normEmail(v))
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	fb["at"] = ts(s.now())
	s.feedback = append(s.feedback, fb)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{})
}
