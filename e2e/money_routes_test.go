package e2e

import (
	"net/http"
	"net/http/httptest"
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
