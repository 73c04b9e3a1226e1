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
