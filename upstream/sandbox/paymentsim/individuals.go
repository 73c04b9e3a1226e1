package paymentsim

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

func (s *Sim) newIndividualLocked(at time.Time) *individual {
	ind := &individual{ID: s.newID(), Status: indRequested, CreatedAt: ts(at), UpdatedAt: ts(at)}
	s.individuals[ind.ID] = ind
	s.indList = append(s.indList, ind.ID)
	return ind
}

func transitionErr(ind *individual, want string) *apiError {
	return errCode(http.StatusConflict, "invalid_transition", "", "the individual is %s, this needs %s", ind.Status, want)
}

// submitLocked is the user submitting the onboarding form: data provided, and
// a consent pending action. It returns the IndividualOnboardingDataProvided
// event and the pending action.
func (s *Sim) submitLocked(ind *individual) (*event, *pendingAction, *apiError) {
	if ind.Status != indRequested {
		return nil, nil, transitionErr(ind, indRequested)
	}
	now := s.now()
	ind.Status, ind.UpdatedAt = indDataProvided, ts(now)
	ev := s.emitLocked(EventIndividualOnboardingDataProvided, map[string]any{"individual_id": ind.ID}, now)
	return ev, s.newPendingActionLocked(ind, now), nil
}

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

func (s *Sim) activateLocked(ind *individual) (*event, *apiError) {
	if ind.Status != indDataProvided {
		return nil, transitionErr(ind, indDataProvided)
	}
	now := s.now()
	ind.Status, ind.UpdatedAt = indActive, ts(now)
	return s.emitLocked(EventIndividualActivated, map[string]any{"individual_id": ind.ID}, now), nil
}

func (s *Sim) blockLocked(ind *individual, reason string) (*event, *apiError) {
	if ind.Status != indDataProvided && ind.Status != indActive {
		return nil, transitionErr(ind, indDataProvided+" or "+indActive)
	}
	if reason == "" {
		reason = "identity_verification_failed"
	}
	now := s.now()
	ind.Status, ind.UpdatedAt, ind.BlockedReason = indBlocked, ts(now), reason
	return s.emitLocked(EventIndividualBlocked, map[string]any{"individual_id": ind.ID, "reason": reason}, now), nil
}

// onboard sends an individual still in onboarding_requested to the form again.
func (s *Sim) onboard(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ind := s.individuals[chi.URLParam(r, "id")]
	if ind == nil {
		writeErr(w, notFound("id", "individual"))
		return
	}
	if ind.Status != indRequested {
		writeErr(w, transitionErr(ind, indRequested))
		return
	}
	ind.UpdatedAt = ts(s.now())
	writeJSON(w, http.StatusOK, map[string]string{
		"id": ind.ID, "status": ind.Status, "form_url": baseURL(r) + "/_sandbox/individuals/" + ind.ID + "/form",
	})
}

func (s *Sim) listIndividuals(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", indRequested, indDataProvided, indActive, indBlocked:
	default:
		writeErr(w, badRequest("status", "unknown status"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []individual{}
	for _, id := range s.indList {
		if ind := s.individuals[id]; status == "" || ind.Status == status {
			out = append(out, *ind)
		}
	}
	writeJSON(w, http.StatusOK, out)
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

func (s *Sim) ctlCreateIndividual(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.newIndividualLocked(s.now()))
}

// individualCtl wraps a control move of one individual: it answers the
// individual after the move, with the event it created.
func (s *Sim) individualCtl(move func(*individual, *http.Request) (*event, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		ind := s.individuals[chi.URLParam(r, "id")]
		if ind == nil {
			writeErr(w, notFound("id", "individual"))
			return
		}
		ev, e := move(ind, r)
		if e != nil {
			writeErr(w, e)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"individual": ind, "event": ev})
	}
}

func (s *Sim) ctlSubmitIndividual(w http.ResponseWriter, r *http.Request) {
	s.individualCtl(func(ind *individual, _ *http.Request) (*event, *apiError) {
		ev, _, e := s.submitLocked(ind)
		return ev, e
	})(w, r)
}

func (s *Sim) ctlActivateIndividual(w http.ResponseWriter, r *http.Request) {
	s.individualCtl(func(ind *individual, _ *http.Request) (*event, *apiError) { return s.activateLocked(ind) })(w, r)
}

func (s *Sim) ctlBlockIndividual(w http.ResponseWriter, r *http.Request) {
	s.individualCtl(func(ind *individual, r *http.Request) (*event, *apiError) {
		var in struct {
			Reason string `json:"reason"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in) // the body is optional
		return s.blockLocked(ind, in.Reason)
	})(w, r)
}

func (s *Sim) ctlIndividualForm(w http.ResponseWriter, r *http.Request) {
	id := html.EscapeString(chi.URLParam(r, "id"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Sandbox onboarding</title><h1>Onboarding of %s</h1>
<form method="post" action="/_sandbox/individuals/%s/submit"><button>Submit all necessary information</button></form>`, id, id)
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

// ctlTrigger fires one onboarding or pending-action event, creating and
// moving an individual through the states it needs.
func (s *Sim) ctlTrigger(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name         string `json:"name"`
		IndividualID string `json:"individual_id"`
		Reason       string `json:"reason"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, badRequest("", "body must be {\"name\": <event name>, \"individual_id\"?: ...}"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ind *individual
	if in.IndividualID != "" {
		if ind = s.individuals[in.IndividualID]; ind == nil {
			writeErr(w, notFound("individual_id", "individual"))
			return
		}
	}
	// provided brings ind to onboarding_data_provided or later.
	provided := func() *apiError {
		if ind == nil {
			ind = s.newIndividualLocked(s.now())
		}
		if ind.Status == indRequested {
			_, _, e := s.submitLocked(ind)
			return e
		}
		return nil
	}
	var (
		ev *event
		e  *apiError
	)
	switch in.Name {
	case EventIndividualOnboardingDataProvided:
		if ind == nil {
			ind = s.newIndividualLocked(s.now())
		}
		ev, _, e = s.submitLocked(ind)
	case EventIndividualActivated:
		if e = provided(); e == nil {
			ev, e = s.activateLocked(ind)
		}
	case EventIndividualBlocked:
		if e = provided(); e == nil {
			ev, e = s.blockLocked(ind, in.Reason)
		}
	case EventPendingActionCreated:
		if ind == nil || ind.Status == indRequested {
			if e = provided(); e == nil {
				pa := s.actions[s.actList[len(s.actList)-1]]
				ev = s.events[s.eventIdx[pa.EventID]]
			}
		} else {
			pa := s.newPendingActionLocked(ind, s.now())
			ev = s.events[s.eventIdx[pa.EventID]]
		}
	case EventPendingActionCompleted:
		if e = provided(); e == nil {
			var pa *pendingAction
			for _, id := range s.actList {
				if a := s.actions[id]; a.IndividualID == ind.ID && a.Status == "pending" {
					pa = a
					break
				}
			}
			if pa == nil {
				pa = s.newPendingActionLocked(ind, s.now())
			}
			ev, e = s.completeActionLocked(pa)
		}
	default:
		e = badRequest("name", "the sandbox triggers %s, %s, %s, %s or %s", EventIndividualOnboardingDataProvided,
			EventIndividualActivated, EventIndividualBlocked, EventPendingActionCreated, EventPendingActionCompleted)
	}
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}

func (s *Sim) ctl3DSPage(w http.ResponseWriter, r *http.Request) {
	id := html.EscapeString(chi.URLParam(r, "order_id"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Sandbox 3-D Secure</title><h1>3-D Secure for order %s</h1>
<form method="post" action="/_sandbox/3ds/%s/complete"><button>Authenticate</button></form>`, id, id)
}

// ctl3DSComplete marks 3-D Secure done for an order id handed out by a
// verification_required error.
func (s *Sim) ctl3DSComplete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := chi.URLParam(r, "order_id")
	p := s.pending[id]
	if p == nil {
		writeErr(w, notFound("order_id", "order awaiting verification"))
		return
	}
	if !p.ThreeDS {
		writeErr(w, errCode(http.StatusConflict, "invalid_transition", "order_id", "this order was not asked for 3-D Secure"))
		return
	}
	p.Verified = true
	writeJSON(w, http.StatusOK, map[string]any{"order_id": id, "verified": true})
}
