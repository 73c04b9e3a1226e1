package paymentsim

import (
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/golang-jwt/jwt/v5"
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
	var cust *customer
	if in.CustomerID != "" {
		cust = s.customers[in.CustomerID]
		if cust == nil {
			return nil, badRequest("customer", "unknown customer")
		}
	}
	var (
		outcome string
		pay     cardPayment
		declMsg = "card declined"
	)
	switch in.PayKind {
	case payOneTime:
		if s.usedTokens[in.Card] {
			return nil, errCode(http.StatusConflict, "card_token_used", "payment.card", "the card token was already used")
		}
		outcome, pay = tokenOutcome(in.Card), testCard()
	case paySaved:
		if cust == nil {
			return nil, badRequest("customer", "customer is required with a saved-card payment")
		}
		m, ok := findMethod(cust, in.Card)
		if !ok {
			return nil, errCode(http.StatusBadRequest, "unknown_method", "payment.card", "the customer has no payment method with this token")
		}
		outcome, pay = "ok", paymentFromMethod(m)
	case payCustomer:
		if cust == nil {
			return nil, badRequest("customer", "customer is required with a customer payment")
		}
		if len(cust.Methods) == 0 {
			outcome, declMsg = "fail", "the customer has no payment method"
		} else {
			outcome, pay = "ok", paymentFromMethod(cust.Methods[0])
		}
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

// writeOrder answers JSON when Accept includes application/json, otherwise
// the signed order token as application/jwt.
func (s *Sim) writeOrder(w http.ResponseWriter, r *http.Request, status int, o orderJSON) {
	if wantsJSON(r) {
		writeJSON(w, status, o)
		return
	}
	w.Header().Set("Content-Type", "application/jwt")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s.signOrder(o)))
}

// signOrder returns the order as an EdDSA-signed JWT, verifiable with the
// key published at /.well-known/jwks.json.
func (s *Sim) signOrder(o orderJSON) string {
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": Issuer, "iat": s.now().Unix(), "order": o})
	t.Header["kid"] = s.kid
	str, err := t.SignedString(s.signKey)
	if err != nil { // cannot happen with a valid ed25519 key
		s.log.Error("sign order", "err", err)
	}
	return str
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

func (s *Sim) patchOrders(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if firstByte(raw) != '[' {
		writeErr(w, badRequest("", "body must be an array of {id, event}"))
		return
	}
	var elems []json.RawMessage
	if e := decodeInto(raw, &elems, ""); e != nil {
		writeErr(w, e)
		return
	}
	type evIn struct {
		Type   *string `json:"type"`
		Amount *int64  `json:"amount"`
	}
	type elIn struct {
		ID     string
		Events []evIn
	}
	var parsed []elIn
	for i, el := range elems {
		f := "[" + itoa(i) + "]"
		if firstByte(el) != '{' {
			writeErr(w, badRequest(f, "element must be an object {id, event}"))
			return
		}
		var x struct {
			ID    *string           `json:"id"`
			Event []json.RawMessage `json:"event"`
		}
		if e := decodeInto(el, &x, f); e != nil {
			writeErr(w, e)
			return
		}
		if x.ID == nil || *x.ID == "" {
			writeErr(w, badRequest(f+".id", "id is required"))
			return
		}
		if len(x.Event) == 0 {
			writeErr(w, badRequest(f+".event", "event must be a non-empty array"))
			return
		}
		pe := elIn{ID: *x.ID}
		for j, ev := range x.Event {
			ef := f + ".event[" + itoa(j) + "]"
			if firstByte(ev) != '{' {
				writeErr(w, badRequest(ef, "event must be an object"))
				return
			}
			var v evIn
			if e := decodeInto(ev, &v, ef); e != nil {
				writeErr(w, e)
				return
			}
			if v.Type == nil || (*v.Type != "capture" && *v.Type != "refund" && *v.Type != "cancel") {
				writeErr(w, badRequest(ef+".type", "type must be capture, refund or cancel"))
				return
			}
			if *v.Type == "cancel" && v.Amount != nil {
				writeErr(w, badRequest(ef+".amount", "cancel takes no amount"))
				return
			}
			pe.Events = append(pe.Events, v)
		}
		parsed = append(parsed, pe)
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
