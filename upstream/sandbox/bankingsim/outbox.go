package bankingsim

import (
	"net/http"
	"slices"
)

// newestFirst copies an outbox in reverse order of sending.
func newestFirst(in []message) []message {
	out := slices.Clone(in)
	slices.Reverse(out)
	if out == nil {
		out = []message{}
	}
	return out
}

func (s *Sim) getSMS(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := newestFirst(s.sms)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) getEmail(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := newestFirst(s.email)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) getFeedback(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := slices.Clone(s.feedback)
	s.mu.Unlock()
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out)
}
