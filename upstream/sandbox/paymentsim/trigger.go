package paymentsim

import (
	"encoding/json"
	"net/http"
	"strings"
)

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
	ev, e := s.triggerLocked(in.Name, ind, in.Reason)
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, http.StatusOK, ev)
}

// triggerLocked fires the event called name for ind, or for a new
// individual when ind is nil, and returns it.
func (s *Sim) triggerLocked(name string, ind *individual, reason string) (*event, *apiError) {
	switch name {
	case EventOrderCreated, EventOrderCaptured, EventOrderRefunded, EventOrderCancelled:
		return s.triggerOrderLocked(name), nil
	case EventIndividualOnboardingDataProvided:
		if ind == nil {
			ind = s.newIndividualLocked(s.now())
		}
		ev, _, e := s.submitLocked(ind)
		return ev, e
	case EventIndividualActivated:
		ind, e := s.providedLocked(ind)
		if e != nil {
			return nil, e
		}
		return s.activateLocked(ind)
	case EventIndividualBlocked:
		ind, e := s.providedLocked(ind)
		if e != nil {
			return nil, e
		}
		return s.blockLocked(ind, reason)
	case EventPendingActionCreated:
		if ind != nil && ind.Status != indRequested {
			pa := s.newPendingActionLocked(ind, s.now())
			return s.events[s.eventIdx[pa.EventID]], nil
		}
		// Submitting the form is what creates a pending action.
		if _, e := s.providedLocked(ind); e != nil {
			return nil, e
		}
		pa := s.actions[s.actList[len(s.actList)-1]]
		return s.events[s.eventIdx[pa.EventID]], nil
	case EventPendingActionCompleted:
		ind, e := s.providedLocked(ind)
		if e != nil {
			return nil, e
		}
		return s.completeActionLocked(s.openActionLocked(ind))
	}
	return nil, badRequest("name", "the sandbox triggers %s", strings.Join(TriggerNames(), ", "))
}

// Trigger describes one event the sandbox can fire on demand.
type Trigger struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Triggers lists what POST /_sandbox/trigger fires, in a stable order.
func Triggers() []Trigger {
	return []Trigger{
		{EventOrderCreated, "a 12.50 EUR order authorised on a test card"},
		{EventOrderCaptured, "an order authorised, then captured in full"},
		{EventOrderRefunded, "an order authorised, captured, then refunded in full"},
		{EventOrderCancelled, "an order authorised, then cancelled"},
		{EventIndividualOnboardingDataProvided, "a new individual submits the onboarding form"},
		{EventIndividualActivated, "an individual is onboarded (form submitted, then activated)"},
		{EventIndividualBlocked, "an individual's onboarding is rejected"},
		{EventPendingActionCreated, "a pending action (consent flow) is opened for an individual"},
		{EventPendingActionCompleted, "the user completes a pending action's consent flow"},
	}
}

// TriggerNames are the names of Triggers.
func TriggerNames() []string {
	var out []string
	for _, t := range Triggers() {
		out = append(out, t.Name)
	}
	return out
}

// triggerOrderLocked creates an order on the test card, moves it as far as
// name needs, emitting every event on the way as the real flow would, and
// returns the event called name.
func (s *Sim) triggerOrderLocked(name string) *event {
	now := s.now()
	in := &orderIn{Number: "trigger-" + s.newID()[:8], Items: json.RawMessage(`{"name":"Sandbox trigger","amount":1250}`),
		Amount: 1250, Currency: "EUR"}
	o := s.createOrderLocked(in, "", nil, json.RawMessage(`{"name":"Trigger Test","email":"trigger@example.com"}`), testCard(), now)
	last := s.events[len(s.events)-1]
	var steps []string
	switch name {
	case EventOrderCaptured:
		steps = []string{"capture"}
	case EventOrderRefunded:
		steps = []string{"capture", "refund"}
	case EventOrderCancelled:
		steps = []string{"cancel"}
	}
	for _, typ := range steps {
		evName, amt, _ := applyEvent(o, typ, nil)
		last = s.emitLocked(evName, orderPayload(o, amt), now)
	}
	return last
}

// ctlTriggers lists the trigger names with what each does.
func (s *Sim) ctlTriggers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Triggers())
}

// providedLocked brings ind (a new individual when nil) to
// onboarding_data_provided or later.
func (s *Sim) providedLocked(ind *individual) (*individual, *apiError) {
	if ind == nil {
		ind = s.newIndividualLocked(s.now())
	}
	if ind.Status == indRequested {
		if _, _, e := s.submitLocked(ind); e != nil {
			return nil, e
		}
	}
	return ind, nil
}

// openActionLocked is the oldest pending action of ind still pending, or a
// new one.
func (s *Sim) openActionLocked(ind *individual) *pendingAction {
	for _, id := range s.actList {
		if a := s.actions[id]; a.IndividualID == ind.ID && a.Status == "pending" {
			return a
		}
	}
	return s.newPendingActionLocked(ind, s.now())
}
