package paymentsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// parseEmbeddedOrders reads the optional order field of customer or method
// creation: one Order creatable or a non-empty array of them.
func parseEmbeddedOrders(raw json.RawMessage) (orders []*orderIn, isArray bool, e *apiError) {
	switch firstByte(raw) {
	case 0, 'n':
		return nil, false, nil
	case '{':
		o, e := parseOrder(raw, "order", true)
		if e != nil {
			return nil, false, e
		}
		return []*orderIn{o}, false, nil
	case '[':
		var list []json.RawMessage
		if e := decodeInto(raw, &list, "order"); e != nil {
			return nil, false, e
		}
		if len(list) == 0 {
			return nil, false, badRequest("order", "order must not be an empty array")
		}
		for i, el := range list {
			o, e := parseOrder(el, "order["+itoa(i)+"]", true)
			if e != nil {
				return nil, false, e
			}
			orders = append(orders, o)
		}
		return orders, true, nil
	}
	return nil, false, badRequest("order", "order must be an Order creatable or an array of them")
}

// orderTokens creates the embedded orders charged to m and returns the
// signed order token(s) in the shape the orders were sent.
func (s *Sim) embeddedOrdersLocked(c *customer, m method, orders []*orderIn, isArray bool) any {
	if len(orders) == 0 {
		return nil
	}
	toks := make([]string, 0, len(orders))
	for _, in := range orders {
		o := s.createOrderLocked(in, "", c, nil, paymentFromMethod(m), s.now())
		toks = append(toks, s.signOrder(o.toJSON()))
	}
	if !isArray {
		return toks[0]
	}
	return toks
}

func (s *Sim) postCustomer(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if firstByte(raw) != '{' {
		writeErr(w, badRequest("", "body must be a Customer creatable object"))
		return
	}
	var in struct {
		Number  *string         `json:"number"`
		Contact json.RawMessage `json:"contact"`
		Method  json.RawMessage `json:"method"`
		Order   json.RawMessage `json:"order"`
	}
	if e := decodeInto(raw, &in, ""); e != nil {
		writeErr(w, e)
		return
	}
	if in.Number == nil || strings.TrimSpace(*in.Number) == "" {
		writeErr(w, badRequest("number", "number is required"))
		return
	}
	if e := validateContact(in.Contact, "contact"); e != nil {
		writeErr(w, e)
		return
	}
	if firstByte(in.Method) != '[' {
		writeErr(w, badRequest("method", "method is required: an array of Payment method creatable (may be empty)"))
		return
	}
	var rawMethods []json.RawMessage
	if e := decodeInto(in.Method, &rawMethods, "method"); e != nil {
		writeErr(w, e)
		return
	}
	methods := make([]methodIn, 0, len(rawMethods))
	for i, rm := range rawMethods {
		m, e := parseMethodCreatable(rm, "method["+itoa(i)+"]")
		if e != nil {
			writeErr(w, e)
			return
		}
		methods = append(methods, m)
	}
	orders, isArray, e := parseEmbeddedOrders(in.Order)
	if e != nil {
		writeErr(w, e)
		return
	}
	if len(orders) > 0 && len(methods) == 0 {
		writeErr(w, badRequest("method", "an order needs a payment method to charge"))
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.custNumbers[*in.Number]; taken {
		writeErr(w, errCode(http.StatusConflict, "customer_number_taken", "number", "customer number %q is taken", *in.Number))
		return
	}
	if e := s.checkNewCardsLocked(methods); e != nil {
		writeErr(w, e)
		return
	}
	c := s.newCustomerLocked(*in.Number, compact(in.Contact), s.now())
	for _, m := range methods {
		s.addMethodLocked(c, m.Card, s.now())
	}
	var tokens any
	if len(orders) > 0 {
		tokens = s.embeddedOrdersLocked(c, c.Methods[0], orders, isArray)
	}
	out := c.toJSON()
	out.Order = tokens
	writeJSON(w, http.StatusCreated, out)
}

func (s *Sim) newCustomerLocked(number string, contact json.RawMessage, created time.Time) *customer {
	c := &customer{ID: s.newID(), Number: number, Contact: contact, Currency: "EUR", Created: created}
	c.Key = "ck_" + strings.ReplaceAll(s.newID(), "-", "")
	s.customers[c.ID] = c
	s.custList = append(s.custList, c.ID)
	s.custNumbers[number] = c.ID
	s.custKeys[c.Key] = c.ID
	return c
}

// customerParamLocked resolves {customer_id}: a customer key may only say
// "me"; other keys name the customer by id.
func (s *Sim) customerParamLocked(r *http.Request) (*customer, *apiError) {
	id := chi.URLParam(r, "customer_id")
	p := principalOf(r)
	if p.kind == kindCustomer {
		if id != "me" {
			return nil, errCode(http.StatusForbidden, "forbidden_key", "customer_id", `a customer key names its customer "me"`)
		}
		id = p.customerID
	}
	c := s.customers[id]
	if c == nil {
		return nil, notFound("customer_id", "customer")
	}
	return c, nil
}

func (s *Sim) getCustomer(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.customerParamLocked(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, http.StatusOK, c.toJSON())
}

func (s *Sim) listCustomers(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]customerJSON, 0, len(s.custList))
	for _, id := range s.custList {
		out = append(out, s.customers[id].toJSON())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) putContact(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if e := validateContact(raw, ""); e != nil {
		writeErr(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.customerParamLocked(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	c.Contact = compact(raw)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(compact(raw), '\n'))
}

func (s *Sim) ctlCustomerKey(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customers[chi.URLParam(r, "id")]
	if c == nil {
		writeErr(w, notFound("id", "customer"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": c.Key})
}
