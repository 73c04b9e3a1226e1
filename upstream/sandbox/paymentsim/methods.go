package paymentsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// checkNewCardsLocked refuses used, repeated and declined card tokens.
func (s *Sim) checkNewCardsLocked(ms []methodIn) *apiError {
	seen := map[string]bool{}
	for _, m := range ms {
		if s.usedTokens[m.Card] || seen[m.Card] {
			return errCode(http.StatusConflict, "card_token_used", m.field, "the card token was already used")
		}
		seen[m.Card] = true
		if tokenOutcome(m.Card) == "fail" {
			return errCode(http.StatusPaymentRequired, "card_declined", m.field, "card declined")
		}
	}
	return nil
}

// addMethodLocked stores a method from a checked card token and consumes it.
func (s *Sim) addMethodLocked(c *customer, card string, created time.Time) method {
	s.usedTokens[card] = true
	m := testMethod()
	m.Created, m.Token = ts(created), "pm_"+s.newID()
	c.Methods = append(c.Methods, m)
	return m
}

func testMethod() method {
	p := testCard()
	return method{Type: "card", Scheme: p.Scheme, IIN: p.IIN, Last4: p.Last4, Expires: p.Expires, Acquirer: p.Acquirer}
}

func (s *Sim) postMethod(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if firstByte(raw) != '{' {
		writeErr(w, badRequest("", "body must be a Payment method creatable or {method, order}"))
		return
	}
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(raw, &probe)
	combined := probe["method"] != nil
	var (
		m       methodIn
		orders  []*orderIn
		isArray bool
	)
	if combined {
		if m, e = parseMethodCreatable(probe["method"], "method"); e == nil {
			orders, isArray, e = parseEmbeddedOrders(probe["order"])
		}
	} else {
		m, e = parseMethodCreatable(raw, "")
	}
	if e != nil {
		writeErr(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customers[chi.URLParam(r, "customer_id")]
	if c == nil {
		writeErr(w, notFound("customer_id", "customer"))
		return
	}
	if e := s.checkNewCardsLocked([]methodIn{m}); e != nil {
		writeErr(w, e)
		return
	}
	pm := s.addMethodLocked(c, m.Card, s.now())
	if !combined {
		writeJSON(w, http.StatusCreated, pm)
		return
	}
	out := map[string]any{"method": pm}
	if tok := s.embeddedOrdersLocked(c, pm, orders, isArray); tok != nil {
		out["order"] = tok
	}
	writeJSON(w, http.StatusCreated, out)
}

// putMethods reorders or drops methods; every sent method must equal a
// current one in every field.
func (s *Sim) putMethods(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	if firstByte(raw) != '[' {
		writeErr(w, badRequest("", "body must be an array of Payment method objects"))
		return
	}
	var elems []json.RawMessage
	if e := decodeInto(raw, &elems, ""); e != nil {
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
	seen := map[string]bool{}
	next := make([]method, 0, len(elems))
	for i, el := range elems {
		f := "[" + itoa(i) + "]"
		if firstByte(el) != '{' {
			writeErr(w, badRequest(f, "a Payment method object is required"))
			return
		}
		var probe struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(el, &probe)
		cur, ok := findMethod(c, probe.Token)
		if !ok {
			writeErr(w, errCode(http.StatusBadRequest, "unknown_method", f+".token", "the customer has no payment method with this token"))
			return
		}
		if seen[probe.Token] {
			writeErr(w, badRequest(f, "method listed twice"))
			return
		}
		seen[probe.Token] = true
		var sent method
		dec := json.NewDecoder(bytes.NewReader(el))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sent); err != nil || sent != cur {
			writeErr(w, errCode(http.StatusBadRequest, "method_changed", f, "a method must be sent unchanged"))
			return
		}
		next = append(next, cur)
	}
	c.Methods = next
	writeJSON(w, http.StatusOK, c.toJSON())
}
