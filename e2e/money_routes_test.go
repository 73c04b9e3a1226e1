package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// The two routes by which a retry was once answered another person's
// conversion (issue 48), through real HTTP with two persons, reconciled
// with the bank's own ledger: the target lane (a conversion naming no
// target and one naming the wallet the bank picks are one movement) and
// the lookup window (a lookup never reaches back before its attempt).

// scripted applies a script of faults, in order, to the requests of one
// route: 'd' drops the request before the upstream sees it, 'l' lets the
// upstream act and loses the answer, anything else passes it. Past the
// script, requests pass.
type scripted struct {
	mu     sync.Mutex
	route  string
	script []byte
}

func (s *scripted) next(route string) byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if route != s.route || len(s.script) == 0 {
		return 0
	}
	f := s.script[0]
	s.script = s.script[1:]
	return f
}

func (s *scripted) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := s.next(r.Method + " " + r.URL.Path)
		if f != 'd' && f != 'l' {
			next.ServeHTTP(w, r)
			return
		}
		if f == 'l' {
			next.ServeHTTP(httptest.NewRecorder(), r)
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	})
}

// person is one signed-in person of the demo corporation and the keys she
// was answered.
type person struct {
	name, id string
	g        *testGateway
	answered map[string]string // key -> conversion id
}

// convertAs sends one conversion of p under key and returns the id
// answered (or "") and the error code (or "").
func convertAs(t *testing.T, p *person, in map[string]any) (string, string) {
	t.Helper()
	res, r := p.g.convert(t, in)
	if c := r.code(); c != "" {
		return "", c
	}
	if res.Typename != "Conversion" || res.ID == "" {
		t.Fatalf("%s: %s", p.name, r.Data)
	}
	key, _ := in["idempotencyKey"].(string)
	if prev, ok := p.answered[key]; ok && prev != res.ID {
		t.Errorf("%s's key %s answered %s, then %s", p.name, key, prev, res.ID)
	}
	p.answered[key] = res.ID
	return res.ID, ""
}

// reconcileConversions reads the conversions of amount out of the USD
// wallet made since before from the bank's ledger and checks them against
// what the persons were answered: every answered id exists and was made
// by the person answered, no id was answered to two persons' keys, and the
// conversions made are exactly the distinct ids answered as made.
func reconcileConversions(t *testing.T, g *testGateway, before map[any]bool, amount int64, persons ...*person) {
	t.Helper()
	made := map[string]string{} // id -> maker's person id
	for _, tx := range upstreamConversions(t, g.SandboxURL, demoCorpID, demoUSDWalletID) {
		if before[tx["id"]] || num(tx["target_amount"]) != amount {
			continue
		}
		by, _ := tx["created_by"].(map[string]any)
		made[tx["id"].(string)], _ = by["id"].(string)
	}
	answeredTo := map[string]string{}
	for _, p := range persons {
		for key, id := range p.answered {
			if other, ok := answeredTo[id]; ok && other != p.name {
				t.Errorf("conversion %s answered to %s and to %s", id, other, p.name)
			}
			answeredTo[id] = p.name
			maker, ok := made[id]
			switch {
			case !ok:
				t.Errorf("%s's key %s answered %s, which the bank does not hold", p.name, key, id)
			case maker != p.id:
				t.Errorf("%s's key %s answered %s, which person %s made: another's conversion", p.name, key, id, maker)
			}
		}
	}
	if len(made) != len(answeredTo) {
		t.Errorf("the bank made %d conversions of %d, the persons were answered %d distinct ones: %v answered %v",
			len(made), amount, len(answeredTo), made, answeredTo)
	}
}

func conversionsBefore(t *testing.T, g *testGateway) map[any]bool {
	t.Helper()
	before := map[any]bool{}
	for _, tx := range upstreamConversions(t, g.SandboxURL, demoCorpID, demoUSDWalletID) {
		before[tx["id"]] = true
	}
	return before
}

// untilKnown retries one conversion under its key while the outcome is
// unknown or the lane busy (the settle window here is short), and returns
// the id answered.
func untilKnown(t *testing.T, p *person, in map[string]any) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		id, code := convertAs(t, p, in)
		switch {
		case code == "":
			return id
		case code != "OUTCOME_UNKNOWN" && code != "RATE_LIMITED":
			t.Fatalf("%s: %s", p.name, code)
		case time.Now().After(deadline):
			t.Fatalf("%s: still %s", p.name, code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func twoPersons(t *testing.T, g *testGateway) (anna, dace *person) {
	anna = &person{name: "Anna", id: bankingsim.AnnaID, g: g.as(g.signInPerson(t, "anna@demo.test")), answered: map[string]string{}}
	dace = &person{name: "Dace", id: bankingsim.DaceID, g: g.as(g.signInPerson(t, "dace@demo.test")), answered: map[string]string{}}
	return anna, dace
}

// TestConversionWithoutTargetTakesTheTargetsLane: Anna's conversion that
// leaves out targetWalletId is dropped before the bank; Dace converts the
// same amount from the same wallet naming the GBP wallet (the one the bank
// picks), and her answer is lost after the bank converted; Anna retries at
// once. The two are one movement and take one lane: Dace waits for Anna's
// attempt to settle, and Anna's retry is never answered Dace's conversion.
// Both keys end answered their own, and the ledger holds exactly those two.
func TestConversionWithoutTargetTakesTheTargetsLane(t *testing.T) {
	t.Parallel()
	f := &scripted{route: routeConvert, script: []byte("dl")}
	g := startGatewayWith(t, func(c *app.Config) {
		sandboxBehind(f.wrap)(c)
		c.OutcomeSettle = 200 * time.Millisecond
	})
	anna, dace := twoPersons(t, g)
	before := conversionsBefore(t, g)
	const amount = 1717
	annaIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": amount, "currency": "GBP", "idempotencyKey": uniq("anna-")}
	daceIn := map[string]any{"sourceWalletId": demoUSDWalletID, "targetWalletId": demoGBPWalletID, "amount": amount, "currency": "GBP", "idempotencyKey": uniq("dace-")}

	if _, code := convertAs(t, anna, annaIn); code != "OUTCOME_UNKNOWN" {
		t.Fatalf("Anna's dropped conversion: %q, want OUTCOME_UNKNOWN", code)
	}
	// Dace's conversion is the same movement: it waits for Anna's to settle
	// (or is told when the lane frees), then is sent and its answer lost.
	var code string
	for {
		if _, code = convertAs(t, dace, daceIn); code != "RATE_LIMITED" {
			break
		}
	}
	if code != "OUTCOME_UNKNOWN" {
		t.Fatalf("Dace's lost conversion: %q, want OUTCOME_UNKNOWN", code)
	}
	// Anna at once: Dace's conversion is there and is not provably Anna's.
	if id, code := convertAs(t, anna, annaIn); id != "" || (code != "OUTCOME_UNKNOWN" && code != "RATE_LIMITED") {
		t.Fatalf("Anna's retry: id %q code %q, want OUTCOME_UNKNOWN (the only conversion is Dace's)", id, code)
	}
	daceID := untilKnown(t, dace, daceIn)
	annaID := untilKnown(t, anna, annaIn)
	if annaID == daceID {
		t.Fatalf("Anna was answered Dace's conversion %s", daceID)
	}
	for _, p := range []*person{anna, dace} { // replays answer the same
		in := annaIn
		if p == dace {
			in = daceIn
		}
		convertAs(t, p, in)
	}
	reconcileConversions(t, g, before, amount, anna, dace)
}

// TestLookupNeverReachesBeforeItsAttempt: Dace's conversion whose answer
// was lost before Anna's attempt of the same shape began (Dace's hold
// over, Dace not back yet); Anna's is dropped before the bank. Anna's
// retries never answer Dace's older conversion: they find nothing of
// Anna's, and convert once it has settled. Dace's retry then proves hers.
func TestLookupNeverReachesBeforeItsAttempt(t *testing.T) {
	t.Parallel()
	f := &scripted{route: routeConvert, script: []byte("ld")}
	g := startGatewayWith(t, func(c *app.Config) {
		sandboxBehind(f.wrap)(c)
		c.OutcomeSettle = 200 * time.Millisecond
	})
	anna, dace := twoPersons(t, g)
	before := conversionsBefore(t, g)
	const amount = 1818
	daceIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": amount, "currency": "GBP", "idempotencyKey": uniq("dace-")}
	annaIn := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": amount, "currency": "GBP", "idempotencyKey": uniq("anna-")}

	if _, code := convertAs(t, dace, daceIn); code != "OUTCOME_UNKNOWN" {
		t.Fatalf("Dace's lost conversion: %q, want OUTCOME_UNKNOWN", code)
	}
	var code string
	for {
		if _, code = convertAs(t, anna, annaIn); code != "RATE_LIMITED" {
			break
		}
	}
	if code != "OUTCOME_UNKNOWN" {
		t.Fatalf("Anna's dropped conversion: %q, want OUTCOME_UNKNOWN", code)
	}
	annaID := untilKnown(t, anna, annaIn)
	daceID := untilKnown(t, dace, daceIn)
	if annaID == daceID {
		t.Fatalf("Anna was answered Dace's conversion %s", daceID)
	}
	reconcileConversions(t, g, before, amount, anna, dace)
}

const (
	routeSimulate  = "POST /banking/v2/card/simulation"
	routeAttach    = "POST /banking/v2/corporations/" + demoCorpID + "/wallet-requisites/attach"
	attachMutation = `mutation($input: AttachWalletRequisitesInput!) { attachWalletRequisites(input: $input) { id } }`
)

// cardTransactions counts a card's transactions, read back through the
// gateway from the bank.
func cardTransactions(t *testing.T, g *testGateway, cardID string) int {
	t.Helper()
	var d struct {
		Card struct {
			Transactions struct {
				Edges []struct{} `json:"edges"`
			} `json:"transactions"`
		} `json:"card"`
	}
	g.query(t, `query($id: ID!) { card(id: $id) { transactions { edges { node { type } } } } }`, map[string]any{"id": cardID}).decode(t, &d)
	return len(d.Card.Transactions.Edges)
}

// corporationRequisites lists the demo corporation's requisites records.
func corporationRequisites(t *testing.T, g *testGateway) map[string]bool {
	t.Helper()
	var d struct {
		Corporation struct {
			WalletRequisites []struct {
				ID string `json:"id"`
			} `json:"walletRequisites"`
		} `json:"corporation"`
	}
	g.query(t, `{ corporation(id: "`+demoCorpID+`") { walletRequisites { id } } }`, nil).decode(t, &d)
	out := map[string]bool{}
	for _, q := range d.Corporation.WalletRequisites {
		out[q.ID] = true
	}
	return out
}

// wantUnknownNotRetryable checks a lost answer of a mutation the bank
// keeps no reference for: OUTCOME_UNKNOWN, and retryable false (no retry
// with the key can tell).
func wantUnknownNotRetryable(t *testing.T, what string, r gqlResponse) {
	t.Helper()
	if r.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("%s: %s %+v, want OUTCOME_UNKNOWN", what, r.Data, r.Errors)
	}
	if rt, _ := r.Errors[0].Extensions["retryable"].(bool); rt {
		t.Errorf("%s: retryable true, yet no retry with the key can tell", what)
	}
}

// TestLostCardAuthorisationAndRequisitesRetriedUnderKeyMakeOne: the answer
// of a keyed simulateCardTransaction, and of a keyed attachWalletRequisites,
// is lost after the bank acted. The retries under the key never send it
// again: one authorisation (the funding wallet moved once, the card holds
// one transaction), one new requisites record. Keys whose answers arrive
// replay the first answer.
func TestLostCardAuthorisationAndRequisitesRetriedUnderKeyMakeOne(t *testing.T) {
	t.Parallel()
	sim := &scripted{route: routeSimulate, script: []byte("l")}
	att := &scripted{route: routeAttach, script: []byte("l")}
	g := startGatewayWith(t, sandboxBehind(func(h http.Handler) http.Handler { return sim.wrap(att.wrap(h)) }))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.signInStaff(t)

	card := anna.issueCard(t, issueInput())
	wallet0 := anna.walletBalance(t, bankingsim.DemoCardWalletID)
	in := map[string]any{"cardId": card.ID, "amount": 2500, "idempotencyKey": uniq("sim-")}
	wantUnknownNotRetryable(t, "the lost authorisation", anna.query(t, simulateMutation, map[string]any{"input": in}))
	for i := range 2 {
		wantUnknownNotRetryable(t, fmt.Sprintf("retry %d of the lost authorisation", i), anna.query(t, simulateMutation, map[string]any{"input": in}))
	}
	if n := cardTransactions(t, anna, card.ID); n != 1 {
		t.Errorf("the card holds %d transactions for one keyed authorisation, want 1", n)
	}
	if w := anna.walletBalance(t, bankingsim.DemoCardWalletID); wallet0-w != 2500 {
		t.Errorf("the funding wallet moved %d for one authorisation of 2500", wallet0-w)
	}
	in2 := map[string]any{"cardId": card.ID, "amount": 1200, "idempotencyKey": uniq("sim-")}
	var first, again struct {
		Sim simResult `json:"simulateCardTransaction"`
	}
	anna.query(t, simulateMutation, map[string]any{"input": in2}).decode(t, &first)
	anna.query(t, simulateMutation, map[string]any{"input": in2}).decode(t, &again)
	if first.Sim.Typename != "CardAuthorised" || again.Sim.Code != first.Sim.Code || again.Sim.Typename != first.Sim.Typename {
		t.Errorf("a keyed authorisation, then its replay: %+v, %+v", first.Sim, again.Sim)
	}
	if n := cardTransactions(t, anna, card.ID); n != 2 {
		t.Errorf("the card holds %d transactions for two keyed authorisations, want 2", n)
	}
	if n := g.stats(t).Routes[routeSimulate]; n != 2 {
		t.Errorf("%d authorisations sent to the bank for two keys, want 2", n)
	}

	before := corporationRequisites(t, anna)
	manual := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A", "requisitesMode": "MANUAL"})
	ain := map[string]any{"corporationId": demoCorpID, "walletId": manual, "idempotencyKey": uniq("attach-")}
	wantUnknownNotRetryable(t, "the lost requisites", anna.query(t, attachMutation, map[string]any{"input": ain}))
	wantUnknownNotRetryable(t, "the lost requisites' retry", anna.query(t, attachMutation, map[string]any{"input": ain}))
	fresh := 0
	for id := range corporationRequisites(t, anna) {
		if !before[id] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d new requisites records for one keyed attach, want 1", fresh)
	}
	manual2 := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A", "requisitesMode": "MANUAL"})
	ain2 := map[string]any{"corporationId": demoCorpID, "walletId": manual2, "idempotencyKey": uniq("attach-")}
	var a1, a2 struct {
		Attach []struct {
			ID string `json:"id"`
		} `json:"attachWalletRequisites"`
	}
	anna.query(t, attachMutation, map[string]any{"input": ain2}).decode(t, &a1)
	anna.query(t, attachMutation, map[string]any{"input": ain2}).decode(t, &a2)
	if len(a1.Attach) != 1 || len(a2.Attach) != 1 || a1.Attach[0].ID != a2.Attach[0].ID {
		t.Errorf("a keyed attach, then its replay: %+v, %+v", a1, a2)
	}
	if n := g.stats(t).Routes["POST /banking/v2/corporations/{corporation_id}/wallet-requisites/attach"]; n != 2 {
		t.Logf("stats routes: %v", g.stats(t).Routes)
		t.Errorf("%d attaches sent to the bank for two keys, want 2", n)
	}
}

// TestEmptyIdempotencyKeyIsBadInput: an empty or blank key is not "no
// key": every keyed mutation refuses it with BAD_USER_INPUT on
// input.idempotencyKey, and nothing reaches the upstream.
func TestEmptyIdempotencyKeyIsBadInput(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	api := g.as(g.signInAPI(t))
	staff := g.signInStaff(t)
	customerID, methods := createCustomer(t, api, uniq("tok_ok_"))
	orderID, _ := capturedOrder(t, api, 5000, true)
	manual := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A", "requisitesMode": "MANUAL"})
	card := anna.issueCard(t, issueInput())
	g.resetStats(t)

	for _, key := range []string{"", " ", "\t \n"} {
		for _, c := range []struct {
			name, query string
			as          *testGateway
			input       map[string]any
		}{
			{"createConversion", conversionMutation, anna, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 2000, "currency": "GBP"}},
			{"createOrder", createOrderMutation, api, map[string]any{"currency": "EUR", "customerId": customerID, "items": map[string]any{"amount": 1000},
				"payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}}},
			{"refundOrder", fmt.Sprintf(changeWithKey, "RefundOrderInput", "refund"), api, map[string]any{"orderId": orderID, "amount": 100}},
			{"captureOrder", fmt.Sprintf(changeWithKey, "CaptureOrderInput", "capture"), api, map[string]any{"orderId": orderID}},
			{"cancelOrder", fmt.Sprintf(changeWithKey, "CancelOrderInput", "cancel"), api, map[string]any{"orderId": orderID}},
			{"issueCard", issueCardMutation, anna, issueInput()},
			{"simulateCardTransaction", simulateMutation, anna, map[string]any{"cardId": card.ID, "amount": 100}},
			{"attachWalletRequisites", attachMutation, anna, map[string]any{"corporationId": demoCorpID, "walletId": manual}},
			{"createCustomer", createCustomerMutation, g, map[string]any{"number": uniq("T-"), "contact": map[string]any{"name": "X", "email": "x@example.com"}, "cardTokens": []string{}}},
		} {
			in := maps.Clone(c.input)
			in["idempotencyKey"] = key
			r := c.as.query(t, c.query, map[string]any{"input": in})
			if code, field := errField(r); code != "BAD_USER_INPUT" || field != "input.idempotencyKey" {
				t.Errorf("%s with idempotencyKey %q: %s %s %s", c.name, key, code, field, r.Data)
			}
		}
	}
	s := g.stats(t)
	for route, n := range s.Routes {
		if strings.HasPrefix(route, "POST") || strings.HasPrefix(route, "PATCH") {
			t.Errorf("%d %s upstream for refused keys", n, route)
		}
	}
}

// TestSignedOutCustomerKeysAreEachClients: two signed-out clients choose
// the same idempotencyKey for createCustomer. The second, with its own
// input (its own card token), is neither told the key is taken nor given
// the first client's customer and stored methods: it gets its own. The
// first client's retry still replays its own.
func TestSignedOutCustomerKeysAreEachClients(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		name := "signed out"
		if shared {
			name = "on the sandbox's shared anonymous session"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, "-sandbox-anonymous", strconv.FormatBool(shared))
			signedOutCustomerKeys(t, g)
		})
	}
}

func signedOutCustomerKeys(t *testing.T, g *testGateway) {
	key := uniq("anon-")
	create := func(number, token string) (string, []string, gqlResponse) {
		var d struct {
			CreateCustomer struct {
				Customer struct {
					ID             string `json:"id"`
					PaymentMethods []struct {
						Token string `json:"token"`
					} `json:"paymentMethods"`
				} `json:"customer"`
			} `json:"createCustomer"`
		}
		r := g.query(t, createCustomerMutation, map[string]any{"input": map[string]any{"number": number,
			"contact": map[string]any{"name": "Same Name", "email": "same@example.com"}, "cardTokens": []string{token}, "idempotencyKey": key}})
		if len(r.Errors) > 0 {
			return "", nil, r
		}
		r.decode(t, &d)
		var methods []string
		for _, m := range d.CreateCustomer.Customer.PaymentMethods {
			methods = append(methods, m.Token)
		}
		return d.CreateCustomer.Customer.ID, methods, r
	}
	tokA, tokB, numA, numB := uniq("tok_ok_"), uniq("tok_ok_"), uniq("N-"), uniq("N-")
	idA, methodsA, r := create(numA, tokA)
	if idA == "" {
		t.Fatalf("first client: %+v", r.Errors)
	}
	idB, methodsB, r := create(numB, tokB)
	if idB == "" {
		t.Fatalf("second client, same key, its own card: %s %+v (the key is the first client's, not its)", r.code(), r.Errors)
	}
	if idB == idA || slices.Equal(methodsA, methodsB) {
		t.Fatalf("the second client was given the first client's customer %s and methods %v", idA, methodsA)
	}
	if again, _, _ := create(numA, tokA); again != idA {
		t.Errorf("the first client's retry answered %s, want its customer %s", again, idA)
	}
}

// TestLostRefundAfterAnothersRefundIsNotRetryable: a keyed refund is
// dropped before the upstream; another principal then refunds the same
// amount without a key. The order shows a refund the key cannot prove its
// own, and nothing can ever change that: OUTCOME_UNKNOWN with retryable
// false (check the order), never "retry", never the other's refund as its.
func TestLostRefundAfterAnothersRefundIsNotRetryable(t *testing.T) {
	t.Parallel()
	f := &scripted{route: routeOrderChange, script: []byte("d")}
	g := startGatewayWith(t, func(c *app.Config) {
		sandboxBehind(f.wrap)(c)
		c.OutcomeSettle = 100 * time.Millisecond
	})
	api := g.as(g.signInAPI(t))
	staff := g.as(g.signInStaff(t))
	id, _ := capturedOrder(t, api, 5000, true)
	in := map[string]any{"orderId": id, "amount": 1000, "idempotencyKey": uniq("refund-")}
	_, r := changeKeyed(t, api, "refund", in)
	if r.code() != "OUTCOME_UNKNOWN" {
		t.Fatalf("the dropped refund: %s %+v", r.Data, r.Errors)
	}
	if rt, _ := r.Errors[0].Extensions["retryable"].(bool); !rt {
		t.Errorf("the first answer: retryable false, yet a retry can still tell")
	}
	// Staff's refund waits for the dropped one to settle, then refunds.
	if c, r := changeKeyed(t, staff, "refund", map[string]any{"orderId": id, "amount": 1000}); c.Applied != "refund" {
		t.Fatalf("staff's refund: %s %+v", r.Data, r.Errors)
	}
	for i := range 2 {
		c, r := changeKeyed(t, api, "refund", in)
		if c.Applied != "" {
			t.Fatalf("retry %d answered staff's refund as the key's: %s", i, r.Data)
		}
		wantUnknownNotRetryable(t, fmt.Sprintf("retry %d", i), r)
	}
}
