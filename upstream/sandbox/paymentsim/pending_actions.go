package paymentsim

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

func (s *Sim) newPendingActionLocked(ind *individual, now time.Time) *pendingAction {
	pa := &pendingAction{ID: s.newID(), IndividualID: ind.ID, Type: "consent", Status: "pending", CreatedAt: ts(now)}
	ev := s.emitLocked(EventPendingActionCreated, map[string]any{"individual_id": ind.ID, "pending_action_id": pa.ID}, now)
	pa.EventID = ev.ID
	s.actions[pa.ID] = pa
	s.actList = append(s.actList, pa.ID)
	return pa
}

func (s *Sim) completeActionLocked(pa *pendingAction) (*event, *apiError) {
	if pa.Status != "pending" {
		return nil, errCode(http.StatusConflict, "invalid_transition", "", "the pending action is already %s", pa.Status)
	}
	now := s.now()
	at := ts(now)
	pa.Status, pa.CompletedAt = "completed", &at
	ev := s.emitLocked(EventPendingActionCompleted, map[string]any{"individual_id": pa.IndividualID, "pending_action_id": pa.ID}, now)
	pa.completedEvent = ev.ID
	return ev, nil
}

func (s *Sim) getPendingActions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	evID, indID := q.Get("event_id"), q.Get("individual_id")
	if (evID == "") == (indID == "") {
		writeErr(w, badRequest("event_id", "give exactly one of event_id and individual_id"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if evID != "" {
		for _, id := range s.actList {
			if pa := s.actions[id]; pa.EventID == evID || pa.completedEvent == evID {
				writeJSON(w, http.StatusOK, pa)
				return
			}
		}
		writeErr(w, notFound("event_id", "pending action for this event"))
		return
	}
	if s.individuals[indID] == nil {
		writeErr(w, notFound("individual_id", "individual"))
		return
	}
	out := []*pendingAction{}
	for _, id := range s.actList {
		if pa := s.actions[id]; pa.IndividualID == indID {
			out = append(out, pa)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) ctlCompletePendingAction(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pa := s.actions[chi.URLParam(r, "id")]
	if pa == nil {
		writeErr(w, notFound("id", "pending action"))
		return
	}
	ev, e := s.completeActionLocked(pa)
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending_action": pa, "event": ev})
}
