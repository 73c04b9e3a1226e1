package paymentsim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
)

// emitLocked stores an event and, when a webhook is registered, announces it
// in the background. Callers hold mu.
func (s *Sim) emitLocked(name string, payload map[string]any, at time.Time) *event {
	ev := &event{ID: s.newID(), Name: name, Payload: payload, CreatedAt: ts(at)}
	s.eventIdx[ev.ID] = len(s.events)
	s.events = append(s.events, ev)
	if s.webhook != nil && !s.closed {
		s.wg.Add(1)
		go s.deliver(*ev, s.webhook.ID, s.webhook.URL)
	}
	return ev
}

func (s *Sim) getEvent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.eventIdx[chi.URLParam(r, "id")]
	if !ok {
		writeErr(w, notFound("id", "event"))
		return
	}
	writeJSON(w, http.StatusOK, s.events[i])
}

// listEvents is the sandbox's polling addition: events after a cursor,
// oldest first.
func (s *Sim) listEvents(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeErr(w, badRequest("limit", "limit must be an integer from 1 to 500"))
			return
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	from := 0
	if after := r.URL.Query().Get("after"); after != "" {
		i, ok := s.eventIdx[after]
		if !ok {
			writeErr(w, badRequest("after", "after must be the id of an event"))
			return
		}
		from = i + 1
	}
	to := min(from+limit, len(s.events))
	out := make([]*event, 0, to-from)
	out = append(out, s.events[from:to]...)
	writeJSON(w, http.StatusOK, map[string]any{"events": out, "has_more": to < len(s.events)})
}
