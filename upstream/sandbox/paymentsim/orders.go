package paymentsim

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"
)

// testCard is the card behind every test card token.
func testCard() cardPayment {
	return cardPayment{Type: "card", Scheme: "visa", IIN: "424242", Last4: "4242", Expires: [2]int{12, 30}, Acquirer: "sandbox-acquirer"}
}

func paymentFromMethod(m method) cardPayment {
	return cardPayment{Type: "card", Scheme: m.Scheme, IIN: m.IIN, Last4: m.Last4, Expires: m.Expires, Acquirer: m.Acquirer, Token: m.Token}
}

// createOrderLocked stores a successful order and emits OrderCreated.
func (s *Sim) createOrderLocked(in *orderIn, id string, c *customer, contact json.RawMessage, pay cardPayment, created time.Time) *order {
	if id == "" {
		id = s.newID()
	}
	o := &order{
		ID: id, Created: created, Number: in.Number, Contact: contact, Items: in.Items,
		Currency: in.Currency, Charge: in.Charge, Payment: pay, Status: statusAuthorized, Amount: in.Amount,
	}
	if c != nil {
		o.CustomerID = c.ID
		if !c.HasOrder {
			c.HasOrder, c.Currency = true, in.Currency
		}
	}
	if in.Charge == "auto" {
		o.Status, o.Captured = statusCaptured, in.Amount
	}
	s.orders[id] = o
	s.orderList = append(s.orderList, id)
	s.emitLocked(EventOrderCreated, orderPayload(o, o.Amount), created)
	return o
}

func orderPayload(o *order, amount int64) map[string]any {
	return map[string]any{"order_id": o.ID, "amount": amount, "status": o.Status}
}

// placeOrderLocked runs POST /v1/order after body validation: rule 3 of the
// spec (the id of an earlier error), customer scoping, the payment shapes and
// the outcome of the test card tokens.
func (s *Sim) placeOrderLocked(in *orderIn, p principal, base string) (*order, *apiError) {
	cust, e := s.orderCustomerLocked(in, p)
	if e != nil {
		return nil, e
	}
	outcome, pay, declMsg, e := s.orderPaymentLocked(in, cust)
	if e != nil {
		return nil, e
	}
	id := in.ID
	pend := s.pending[id]
	if outcome == "3ds" && pend != nil && pend.Verified {
		outcome = "ok"
	}
	switch outcome {
	case "3ds":
		if id == "" {
			id = s.newID()
		}
		if pend == nil {
			pend = &pendingOrder{}
			s.pending[id] = pend
		}
		pend.ThreeDS = true
		return nil, &apiError{
			Status: http.StatusPaymentRequired, Code: "verification_required", Message: "verification required",
			OrderID: id, VerificationURL: base + "/_sandbox/3ds/" + id,
		}
	case "fail":
		if id == "" {
			id = s.newID()
		}
		if pend == nil {
			s.pending[id] = &pendingOrder{}
		}
		return nil, &apiError{Status: http.StatusPaymentRequired, Code: "card_declined", Message: declMsg, OrderID: id}
	}
	delete(s.pending, id)
	if in.PayKind == payOneTime {
		s.usedTokens[in.Card] = true
	}
	return s.createOrderLocked(in, id, cust, in.Contact, pay, s.now()), nil
}

// orderCustomerLocked checks the order id against rule 3 (only the id of an
// earlier failed attempt may be sent) and finds the order's customer, which
// a customer key can only name as itself. It returns nil for an order with
// inline contact data.
func (s *Sim) orderCustomerLocked(in *orderIn, p principal) (*customer, *apiError) {
	if in.ID != "" {
		if _, ok := s.pending[in.ID]; !ok {
			why := "id is not the id of an earlier failed attempt of this order"
			if _, done := s.orders[in.ID]; done {
				why = "the order with this id already succeeded"
			}
			return nil, errCode(http.StatusBadRequest, "invalid_order_id", "id", "%s", why)
		}
	}
	if p.kind == kindCustomer {
		switch in.CustomerID {
		case "", "me", p.customerID:
			in.CustomerID, in.Contact = p.customerID, nil
		default:
			return nil, errCode(http.StatusForbidden, "forbidden_key", "customer", "a customer key creates orders only for its own customer")
		}
	}
	if in.CustomerID == "" {
		return nil, nil
	}
	cust := s.customers[in.CustomerID]
	if cust == nil {
		return nil, badRequest("customer", "unknown customer")
	}
	return cust, nil
}

// orderPaymentLocked resolves the order's payment to a card and the outcome
// it will have: "ok", "3ds" or "fail" (with the decline message).
func (s *Sim) orderPaymentLocked(in *orderIn, cust *customer) (outcome string, pay cardPayment, declMsg string, e *apiError) {
	declMsg = "card declined"
	switch in.PayKind {
	case payOneTime:
		if s.usedTokens[in.Card] {
			return "", pay, "", errCode(http.StatusConflict, "card_token_used", "payment.card", "the card token was already used")
		}
		return tokenOutcome(in.Card), testCard(), declMsg, nil
	case paySaved:
		if cust == nil {
			return "", pay, "", badRequest("customer", "customer is required with a saved-card payment")
		}
		m, ok := findMethod(cust, in.Card)
		if !ok {
			return "", pay, "", errCode(http.StatusBadRequest, "unknown_method", "payment.card", "the customer has no payment method with this token")
		}
		return "ok", paymentFromMethod(m), declMsg, nil
	case payCustomer:
		if cust == nil {
			return "", pay, "", badRequest("customer", "customer is required with a customer payment")
		}
		if len(cust.Methods) == 0 {
			return "fail", pay, "the customer has no payment method", nil
		}
		return "ok", paymentFromMethod(cust.Methods[0]), declMsg, nil
	}
	return "", pay, declMsg, nil
}

func findMethod(c *customer, token string) (method, bool) {
	for _, m := range c.Methods {
		if m.Token == token {
			return m, true
		}
	}
	return method{}, false
}

func (s *Sim) postOrder(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	in, e := parseOrder(raw, "", false)
	if e != nil {
		writeErr(w, e)
		return
	}
	s.mu.Lock()
	o, e := s.placeOrderLocked(in, principalOf(r), baseURL(r))
	var oj orderJSON
	if o != nil {
		oj = o.toJSON()
	}
	s.mu.Unlock()
	if e != nil {
		writeErr(w, e)
		return
	}
	s.writeOrder(w, r, http.StatusCreated, oj)
}

func (s *Sim) listOrders(w http.ResponseWriter, r *http.Request) {
	var start, end string
	for _, q := range []struct {
		name string
		dst  *string
	}{{"start", &start}, {"end", &end}} {
		v := r.URL.Query().Get(q.name)
		if v == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			writeErr(w, badRequest(q.name, "%s must be a date YYYY-MM-DD", q.name))
			return
		}
		*q.dst = v
	}
	if start != "" && end != "" && end < start {
		writeErr(w, badRequest("end", "end is before start"))
		return
	}
	p := principalOf(r)
	s.mu.Lock()
	var list []*order
	for _, id := range s.orderList {
		o := s.orders[id]
		if p.kind == kindCustomer && o.CustomerID != p.customerID {
			continue
		}
		d := o.Created.UTC().Format(time.DateOnly)
		if (start != "" && d < start) || (end != "" && d > end) {
			continue
		}
		list = append(list, o)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.Before(list[j].Created) })
	out := make([]orderJSON, len(list))
	for i, o := range list {
		out[i] = o.toJSON()
	}
	s.mu.Unlock()
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, out)
		return
	}
	toks := make([]string, len(out))
	for i, o := range out {
		toks[i] = s.signOrder(o)
	}
	writeJSON(w, http.StatusOK, toks)
}

// applied is one event of a PATCH, kept until the whole request is valid.
type applied struct {
	name   string
	order  *order // the working copy
	amount int64
}

// patchEvent is one capture, refund or cancel of a PATCH body.
type patchEvent struct {
	Type   *string `json:"type"`
	Amount *int64  `json:"amount"`
}

// patchElement is one {id, event} of a PATCH body.
type patchElement struct {
	ID     string
	Events []patchEvent
}

// patchOrders applies every event of the body, or none: the first refused
// transition answers 409 and leaves every order as it was.
func (s *Sim) patchOrders(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	parsed, e := parseOrderPatch(raw)
	if e != nil {
		writeErr(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	work := map[string]*order{}
	var done []applied
	for i, el := range parsed {
		o := work[el.ID]
		if o == nil {
			orig := s.orders[el.ID]
			if orig == nil {
				writeErr(w, notFound("["+itoa(i)+"].id", "order"))
				return
			}
			cp := *orig
			o = &cp
			work[el.ID] = o
		}
		for j, ev := range el.Events {
			name, amt, msg := applyEvent(o, *ev.Type, ev.Amount)
			if msg != "" {
				writeErr(w, errCode(http.StatusConflict, "invalid_transition", "["+itoa(i)+"].event["+itoa(j)+"]", "%s", msg))
				return
			}
			snap := *o
			done = append(done, applied{name: name, order: &snap, amount: amt})
		}
	}
	for id, o := range work {
		*s.orders[id] = *o
	}
	now := s.now()
	for _, a := range done {
		s.emitLocked(a.name, orderPayload(a.order, a.amount), now)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(compact(raw), '\n'))
}

// parseOrderPatch reads the PATCH body: a non-empty array of {id, event}
// where event is a non-empty array of capture, refund or cancel.
func parseOrderPatch(raw json.RawMessage) ([]patchElement, *apiError) {
	if firstByte(raw) != '[' {
		return nil, badRequest("", "body must be an array of {id, event}")
	}
	var elems []json.RawMessage
	if e := decodeInto(raw, &elems, ""); e != nil {
		return nil, e
	}
	parsed := make([]patchElement, 0, len(elems))
	for i, el := range elems {
		f := "[" + itoa(i) + "]"
		if firstByte(el) != '{' {
			return nil, badRequest(f, "element must be an object {id, event}")
		}
		var x struct {
			ID    *string           `json:"id"`
			Event []json.RawMessage `json:"event"`
		}
		if e := decodeInto(el, &x, f); e != nil {
			return nil, e
		}
		if x.ID == nil || *x.ID == "" {
			return nil, badRequest(f+".id", "id is required")
		}
		if len(x.Event) == 0 {
			return nil, badRequest(f+".event", "event must be a non-empty array")
		}
		pe := patchElement{ID: *x.ID}
		for j, ev := range x.Event {
			v, e := parsePatchEvent(ev, f+".event["+itoa(j)+"]")
			if e != nil {
				return nil, e
			}
			pe.Events = append(pe.Events, v)
		}
		parsed = append(parsed, pe)
	}
	return parsed, nil
}

func parsePatchEvent(raw json.RawMessage, field string) (patchEvent, *apiError) {
	var v patchEvent
	if firstByte(raw) != '{' {
		return v, badRequest(field, "event must be an object")
	}
	if e := decodeInto(raw, &v, field); e != nil {
		return v, e
	}
	if v.Type == nil || (*v.Type != "capture" && *v.Type != "refund" && *v.Type != "cancel") {
		return v, badRequest(field+".type", "type must be capture, refund or cancel")
	}
	if *v.Type == "cancel" && v.Amount != nil {
		return v, badRequest(field+".amount", "cancel takes no amount")
	}
	return v, nil
}

// applyEvent moves o by one event; msg explains a refused transition.
func applyEvent(o *order, typ string, amount *int64) (name string, amt int64, msg string) {
	switch typ {
	case "capture":
		if o.Status != statusAuthorized {
			return "", 0, "capture needs an authorized order, it is " + o.Status
		}
		left := o.Amount - o.Captured
		amt = left
		if amount != nil {
			amt = *amount
		}
		if amt <= 0 || amt > left {
			return "", 0, "capture amount must be between 1 and " + itoa(int(left))
		}
		o.Captured += amt
		o.Status = statusCaptured
		return EventOrderCaptured, amt, ""
	case "refund":
		if o.Status != statusCaptured && o.Status != statusPartiallyRefunded {
			return "", 0, "refund needs a captured order, it is " + o.Status
		}
		left := o.Captured - o.Refunded
		amt = left
		if amount != nil {
			amt = *amount
		}
		if amt <= 0 || amt > left {
			return "", 0, "refund amount must be between 1 and " + itoa(int(left))
		}
		o.Refunded += amt
		o.Status = statusPartiallyRefunded
		if o.Refunded == o.Captured {
			o.Status = statusRefunded
		}
		return EventOrderRefunded, amt, ""
	default: // cancel
		if o.Status != statusAuthorized {
			return "", 0, "cancel needs an authorized order, it is " + o.Status
		}
		o.Status = statusCancelled
		return EventOrderCancelled, o.Amount - o.Captured, ""
	}
}
