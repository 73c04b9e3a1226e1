package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// The money property: random conversions, orders, captures, cancels,
// refunds and card issues, keyed and unkeyed, from several principals of
// one corporation, through the gateway while a faulty transport in front
// of the upstream loses answers after the upstream acted and drops requests
// before it saw them; then every wallet, order and card is read back from
// the upstream's own ledgers and must reconcile with what the gateway
// answered: at most one movement per intent, exactly the one the gateway
// named when it named one, never one record for two intents, nothing the
// gateway cannot account for, and balances and refunds that add up.

// faulty loses or drops a random share of the requests to chosen routes.
type faulty struct {
	mu      sync.Mutex
	rng     *rand.Rand
	armed   bool
	routes  map[string]bool
	lost    int // answers lost after the upstream acted
	dropped int // requests closed before the upstream saw them
}

// roll picks what happens to one request: 'l' lose the answer, 'd' drop
// the request, 0 pass it.
func (f *faulty) roll(route string) byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || !f.routes[route] {
		return 0
	}
	switch p := f.rng.Float64(); {
	case p < 0.25:
		f.lost++
		return 'l'
	case p < 0.4:
		f.dropped++
		return 'd'
	}
	return 0
}

func (f *faulty) arm(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = on
}

func (f *faulty) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fault := f.roll(r.Method + " " + r.URL.Path)
		if fault == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if fault == 'l' {
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

// untilAnswered sends call with one key until it gets an answer that is not
// "try again" (at most 6 rounds), sometimes two at once, and returns every
// id answered and the last error code.
func untilAnswered(rng *rand.Rand, call func() (id, code string)) (ids []string, last string) {
	for range 6 {
		n := 1
		if rng.Intn(4) == 0 {
			n = 2 // a concurrent retry
		}
		got := make([][2]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i][0], got[i][1] = call() })
		}
		wg.Wait()
		done := false
		for _, g := range got {
			if g[0] != "" {
				ids = append(ids, g[0])
			}
			last = g[1]
			if g[1] != "OUTCOME_UNKNOWN" && g[1] != "UPSTREAM_UNAVAILABLE" && g[1] != "RATE_LIMITED" {
				done = true
			}
		}
		if done {
			return ids, last
		}
	}
	return ids, last
}

// num reads a JSON amount, whether a number or a string.
func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		var n int64
		_, _ = fmt.Sscan(x, &n)
		return n
	}
	return 0
}

// sandboxGET reads an upstream route straight from the sandbox, past the
// gateway, with header set.
func sandboxGET(t *testing.T, url string, header map[string]string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// bankingToken signs the demo API client in to the banking upstream itself.
func bankingToken(t *testing.T, sandboxURL string) string {
	t.Helper()
	resp, err := http.Post(sandboxURL+"/banking/v2/api/signin", "application/json", bytes.NewReader([]byte(`{"apiKey":"demo-api-key"}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || d.Token == "" {
		t.Fatalf("banking sign-in: %d %v", resp.StatusCode, err)
	}
	return d.Token
}

// upstreamConversions lists the conversions out of a wallet, read from the
// upstream's transaction listing.
func upstreamConversions(t *testing.T, sandboxURL, corpID, walletID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for offset := 0; ; {
		var page struct {
			List []map[string]any `json:"list"`
			Meta struct {
				HasMore bool `json:"has_more"`
			} `json:"meta"`
		}
		sandboxGET(t, fmt.Sprintf("%s/banking/v2/corporations/%s/wallets/%s/transactions?meta[limit]=100&meta[offset]=%d", sandboxURL, corpID, walletID, offset),
			map[string]string{"x-access-token": bankingToken(t, sandboxURL)}, &page)
		for _, tx := range page.List {
			if tx["type"] == "convert" && tx["source_counterparty_id"] == walletID {
				out = append(out, tx)
			}
		}
		if !page.Meta.HasMore || len(page.List) == 0 {
			return out
		}
		offset += len(page.List)
	}
}

// intent is what the client saw of one money intent: keyed (retried until
// answered) or not (sent once).
type intent struct {
	keyed   bool
	amount  int64
	by      string   // the person who asked (conversions): the only one whose records may answer it
	answers []string // ids the gateway answered
	final   string   // code of the last answer, "" for a result
}

// unknown reports an intent whose outcome the client never learned.
func (i *intent) unknown() bool {
	return i.final == "OUTCOME_UNKNOWN" || i.final == "UPSTREAM_UNAVAILABLE"
}

// orderIntents is what the client asked of one order it was told exists.
type orderIntents struct {
	id         string
	amount     int64
	captured   bool // the client was told it is captured
	refundable int64
	capture    []*intent
	cancel     []*intent
	refunds    []*intent
}

// subsetSums lists every sum of a subset of xs.
func subsetSums(xs []int64) map[int64]bool {
	sums := map[int64]bool{0: true}
	for _, x := range xs {
		for s := range maps.Clone(sums) {
			sums[s+x] = true
		}
	}
	return sums
}

// TestMoneyReconcilesUnderRandomFaults: a bounded number of random money
// intents (conversions, orders, captures, refunds, cancels, card issues),
// from several principals of one corporation, keyed and unkeyed, on the
// same wallets and orders, while the transport loses answers after the
// upstream acted and drops requests before it. Then every ledger is read
// back from the upstream and reconciled with what the gateway answered:
// every intent moved at most once, a key was never answered with another
// intent's record, and what was confirmed happened.
func TestMoneyReconcilesUnderRandomFaults(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d (a failure replays with the same choices of operations and faults, bar goroutine timing)", seed)
	rng := rand.New(rand.NewSource(seed))
	const routeIssue = "POST /banking/v2/cards/issue"
	f := &faulty{rng: rand.New(rand.NewSource(seed + 1)), routes: map[string]bool{
		routeConvert: true, routeOrder: true, routeOrderChange: true, routeIssue: true, routeSimulate: true, routeAttach: true,
	}}
	g := startGatewayWith(t, func(c *app.Config) {
		sandboxBehind(f.wrap)(c)
		// The faults here never leave a request under way upstream, so an
		// absence is proof at once: retries exercise the resend path as
		// well as the lookup, and lanes free at once.
		c.OutcomeSettle = time.Nanosecond
	})
	persons := []*testGateway{g.as(g.signInPerson(t, "anna@demo.test")), g.as(g.signInPerson(t, "dace@demo.test"))}
	personIDs := []string{bankingsim.AnnaID, bankingsim.DaceID}
	api := g.as(g.signInAPI(t))
	staff := g.signInStaff(t)
	var k struct {
		CreateAPIKey struct {
			PrivateKey string `json:"privateKey"`
		} `json:"createApiKey"`
	}
	g.queryAs(t, staff, `mutation { createApiKey(input: {corporationId: "`+demoCorpID+`", name: "second client"}) { privateKey } }`, nil).decode(t, &k)
	var si struct {
		SignIn signInResult `json:"signIn"`
	}
	g.queryAs(t, "", signInMutation, map[string]any{"input": map[string]any{"kind": "API_KEY", "apiKey": k.CreateAPIKey.PrivateKey}}).decode(t, &si)
	operators := []*testGateway{api, g.as(si.SignIn.SessionToken), g.as(staff)}
	customerID, methods := createCustomer(t, api, uniq("tok_ok_"))
	anna := persons[0]
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	before := map[any]bool{}
	for _, tx := range upstreamConversions(t, g.SandboxURL, demoCorpID, demoUSDWalletID) {
		before[tx["id"]] = true
	}
	simCard := anna.issueCard(t, issueInput())
	requisitesBefore := corporationRequisites(t, persons[0])
	cardsBefore := map[string]bool{simCard.ID: true}
	var cl struct {
		Cards []struct{ ID string } `json:"cards"`
	}
	anna.query(t, `{ cards { id } }`, nil).decode(t, &cl)
	for _, c := range cl.Cards {
		cardsBefore[c.ID] = true
	}

	used := map[int64]bool{}
	amount := func(lo, hi int64) int64 {
		for {
			if a := lo + rng.Int63n(hi-lo); !used[a] {
				used[a] = true
				return a
			}
		}
	}
	// send runs one intent: keyed until answered, unkeyed once.
	send := func(it *intent, call func(key string) (id, code string)) {
		if !it.keyed {
			id, code := call("")
			if id != "" {
				it.answers = append(it.answers, id)
			}
			it.final = code
			return
		}
		key := uniq("prop-")
		it.answers, it.final = untilAnswered(rng, func() (string, string) { return call(key) })
	}
	withKey := func(in map[string]any, key string) map[string]any {
		out := maps.Clone(in)
		if key != "" {
			out["idempotencyKey"] = key
		}
		return out
	}
	// convert names the GBP wallet as the target or leaves it out (the bank
	// then picks that wallet): the same movement either way.
	convert := func(p *testGateway, amount int64, target bool) func(key string) (string, string) {
		in := map[string]any{"sourceWalletId": demoUSDWalletID, "amount": amount, "currency": "GBP"}
		if target {
			in["targetWalletId"] = demoGBPWalletID
		}
		return func(key string) (string, string) {
			res, r := p.convert(t, withKey(in, key))
			if c := r.code(); c != "" {
				return "", c
			}
			if res.Typename != "Conversion" {
				return "", res.Typename
			}
			return res.ID, ""
		}
	}
	change := func(p *testGateway, op, orderID string, amount int64) func(key string) (string, string) {
		in := map[string]any{"orderId": orderID}
		if amount > 0 {
			in["amount"] = amount
		}
		return func(key string) (string, string) {
			c, r := changeKeyed(t, p, op, withKey(in, key))
			if code := r.code(); code != "" {
				return "", code
			}
			return c.OrderID + "/" + c.Applied, ""
		}
	}

	var conversions [][]*intent // per shape: the keyed intent, then unkeyed ones of the same shape
	var orders, cards, sims, attaches []*intent
	var confirmed []*orderIntents
	byID := map[string]*orderIntents{}
	pick := func(ok func(o *orderIntents) bool) *orderIntents {
		var c []*orderIntents
		for _, o := range confirmed {
			if ok(o) {
				c = append(c, o)
			}
		}
		if len(c) == 0 {
			return nil
		}
		return c[rng.Intn(len(c))]
	}
	refused := func(its []*intent) bool { // nothing asked, or every ask refused
		for _, it := range its {
			if it.unknown() || it.final == "" {
				return false
			}
		}
		return true
	}

	const ops = 70
	f.arm(true)
	for range ops {
		switch op := rng.Intn(20); {
		case op < 6: // a conversion by Anna or Dace, sometimes met by another of the same shape
			a := amount(100, 900)
			who := rng.Intn(2)
			keyed := &intent{keyed: true, amount: a, by: personIDs[who]}
			shape := []*intent{keyed}
			call, key := convert(persons[who], a, rng.Intn(2) == 0), uniq("prop-")
			if id, code := call(key); code != "OUTCOME_UNKNOWN" {
				keyed.final = code
				if id != "" {
					keyed.answers = []string{id}
				}
			} else {
				if rng.Intn(3) != 0 {
					// Another principal (mostly the other person), with a key
					// or without, naming the target or not, makes the same
					// movement while the key's outcome is unknown: the target
					// lane; and when the other's own attempt is lost in turn,
					// the lookup window (its lookup must not reach back to
					// the first).
					other := 1 - who
					if rng.Intn(4) == 0 {
						other = who
					}
					echo := &intent{keyed: rng.Intn(2) == 0, amount: a, by: personIDs[other]}
					send(echo, convert(persons[other], a, rng.Intn(2) == 0))
					shape = append(shape, echo)
				}
				keyed.answers, keyed.final = untilAnswered(rng, func() (string, string) { return call(key) })
			}
			conversions = append(conversions, shape)
		case op < 11: // an order on the stored card, keyed or not, by one of the operators
			it := &intent{keyed: rng.Intn(4) != 0, amount: amount(1000, 9000)}
			charge := rng.Intn(2) == 0
			in := map[string]any{"currency": "EUR", "customerId": customerID, "autoCharge": charge,
				"items": map[string]any{"amount": it.amount}, "payment": map[string]any{"savedCard": map[string]any{"methodToken": methods[0]}}}
			p := operators[rng.Intn(len(operators))]
			send(it, func(key string) (string, string) {
				r := p.query(t, createOrderMutation, map[string]any{"input": withKey(in, key)})
				if c := r.code(); c != "" {
					return "", c
				}
				var d struct {
					CreateOrder orderResult `json:"createOrder"`
				}
				r.decode(t, &d)
				if d.CreateOrder.Typename != "Order" {
					return "", d.CreateOrder.Typename
				}
				return d.CreateOrder.ID, ""
			})
			orders = append(orders, it)
			if len(it.answers) > 0 && it.final == "" {
				o := &orderIntents{id: it.answers[0], amount: it.amount, captured: charge}
				if charge {
					o.refundable = it.amount
				}
				confirmed = append(confirmed, o)
				byID[rawID(o.id)] = o
			}
		case op < 13: // capture or cancel an order the client knows authorised
			o := pick(func(o *orderIntents) bool { return !o.captured && len(o.capture)+len(o.cancel) == 0 })
			if o == nil {
				continue
			}
			it := &intent{keyed: rng.Intn(3) != 0}
			if rng.Intn(2) == 0 {
				send(it, change(operators[rng.Intn(len(operators))], "capture", o.id, 0))
				o.capture = append(o.capture, it)
				if it.final == "" {
					o.captured, o.refundable = true, o.amount
				}
			} else {
				send(it, change(operators[rng.Intn(len(operators))], "cancel", o.id, 0))
				o.cancel = append(o.cancel, it)
			}
		case op < 16: // a part refund, keyed or not, by one of the operators
			o := pick(func(o *orderIntents) bool { return o.refundable > 20 })
			if o == nil {
				continue
			}
			it := &intent{keyed: rng.Intn(3) != 0, amount: 1 + rng.Int63n(o.refundable/3)}
			o.refundable -= it.amount // unknown ones too: the client never over-asks
			send(it, change(operators[rng.Intn(len(operators))], "refund", o.id, it.amount))
			o.refunds = append(o.refunds, it)
		case op < 18: // a card authorisation under a key, by Anna or Dace
			it := &intent{keyed: true, amount: amount(100, 900)}
			p := persons[rng.Intn(2)]
			send(it, func(key string) (string, string) {
				r := p.query(t, simulateMutation, map[string]any{"input": withKey(map[string]any{"cardId": simCard.ID, "amount": it.amount}, key)})
				if c := r.code(); c != "" {
					return "", c
				}
				var d struct {
					Sim simResult `json:"simulateCardTransaction"`
				}
				r.decode(t, &d)
				if d.Sim.Typename != "CardAuthorised" {
					return "", d.Sim.Typename
				}
				return fmt.Sprint("auth-", it.amount), ""
			})
			sims = append(sims, it)
		case op < 19: // requisites attached to a new manual wallet under a key, by Anna or Dace
			wallet := g.createWallet(t, staff, map[string]any{"corporationId": demoCorpID, "adapter": "ADAPTER_A", "requisitesMode": "MANUAL"})
			it := &intent{keyed: true}
			p := persons[rng.Intn(2)]
			send(it, func(key string) (string, string) {
				r := p.query(t, attachMutation, map[string]any{"input": withKey(map[string]any{"corporationId": demoCorpID, "walletId": wallet}, key)})
				if c := r.code(); c != "" {
					return "", c
				}
				var d struct {
					Attach []struct {
						ID string `json:"id"`
					} `json:"attachWalletRequisites"`
				}
				r.decode(t, &d)
				if len(d.Attach) != 1 {
					t.Fatalf("attach answered %s", r.Data)
				}
				return d.Attach[0].ID, ""
			})
			attaches = append(attaches, it)
		default: // a card for Dace on the card wallet, under a key
			it := &intent{keyed: true}
			in := issueInput()
			send(it, func(key string) (string, string) {
				r := anna.query(t, issueCardMutation, map[string]any{"input": withKey(in, key)})
				if c := r.code(); c != "" {
					return "", c
				}
				var d struct {
					IssueCard cardData `json:"issueCard"`
				}
				r.decode(t, &d)
				return d.IssueCard.ID, ""
			})
			cards = append(cards, it)
		}
	}
	f.arm(false)
	t.Logf("%d conversion shapes, %d orders (%d confirmed), %d cards, %d authorisations, %d attached requisites; %d answers lost after the upstream acted, %d requests dropped before it",
		len(conversions), len(orders), len(confirmed), len(cards), len(sims), len(attaches), f.lost, f.dropped)

	// oneRecord checks the answers of intents that share a ledger group:
	// each intent was answered one record at most, no record was answered
	// to two intents, every answered record is in the ledger, and the
	// ledger holds at most one record per intent (exactly the answered ones
	// when every outcome is known).
	oneRecord := func(what string, its []*intent, ledger map[string]bool) {
		t.Helper()
		owner := map[string]int{}
		known, unknown := 0, 0
		for i, it := range its {
			for _, id := range it.answers {
				if it.answers[0] != id {
					t.Errorf("%s: one intent answered %s, then %s", what, it.answers[0], id)
				}
				if j, ok := owner[id]; ok && j != i {
					t.Errorf("%s: record %s answered to two intents (no key may be answered with another's record)", what, id)
				}
				owner[id] = i
				if !ledger[id] {
					t.Errorf("%s: the gateway answered %s, which the upstream does not hold", what, id)
				}
			}
			switch {
			case len(it.answers) > 0:
				known++
			case it.unknown():
				unknown++
			}
		}
		if len(ledger) > known+unknown {
			t.Errorf("%s: %d upstream records for %d intents (%d answered, %d unknown): something moved twice", what, len(ledger), len(its), known, unknown)
		}
		if len(ledger) < known {
			t.Errorf("%s: %d upstream records, %d answered", what, len(ledger), known)
		}
	}

	// Conversions: the USD wallet's ledger, grouped by shape.
	ledger := map[int64]map[string]bool{}
	maker := map[string]string{}
	var reserved int64
	for _, tx := range upstreamConversions(t, g.SandboxURL, demoCorpID, demoUSDWalletID) {
		if before[tx["id"]] {
			continue
		}
		by, _ := tx["created_by"].(map[string]any)
		maker[tx["id"].(string)], _ = by["id"].(string)
		reserved += num(tx["source_amount"])
		a := num(tx["target_amount"])
		if ledger[a] == nil {
			ledger[a] = map[string]bool{}
		}
		ledger[a][tx["id"].(string)] = true
	}
	for _, shape := range conversions {
		for _, it := range shape {
			for _, id := range it.answers {
				if m, ok := maker[id]; ok && m != it.by {
					t.Errorf("conversion %s, made by person %s, was answered to person %s", id, m, it.by)
				}
			}
		}
		a := shape[0].amount
		oneRecord(fmt.Sprintf("conversions of %d GBP cents", a), shape, ledger[a])
		delete(ledger, a)
	}
	for a, ids := range ledger {
		t.Errorf("%d upstream conversions of %d no intent accounts for", len(ids), a)
	}
	if usd, _ := anna.balance(t, demoCorpID, demoUSDWalletID); usd0-usd != reserved {
		t.Errorf("the USD wallet moved %d, its conversions reserve %d", usd0-usd, reserved)
	}

	// Orders: the customer's orders, one group per intent (amounts are unique).
	upOrders := upstreamOrders(t, g.SandboxURL, rawID(customerID))
	orderLedger := map[int64]map[string]bool{}
	for _, o := range upOrders {
		a := num(o["amount"])
		if orderLedger[a] == nil {
			orderLedger[a] = map[string]bool{}
		}
		orderLedger[a][orderNodeID(o["id"].(string))] = true
	}
	for _, it := range orders {
		oneRecord(fmt.Sprintf("orders of %d", it.amount), []*intent{it}, orderLedger[it.amount])
		delete(orderLedger, it.amount)
	}
	for a, ids := range orderLedger {
		t.Errorf("%d upstream orders of %d no intent accounts for", len(ids), a)
	}

	// Captures, cancels and refunds: each order's amounts.
	for _, up := range upOrders {
		o := byID[up["id"].(string)]
		if o == nil {
			continue
		}
		status, captured, refunded := up["status"].(string), num(up["captured_amount"]), num(up["refunded_amount"])
		var ok, maybe []int64
		var okSum int64
		for _, r := range o.refunds {
			switch {
			case r.final == "":
				ok = append(ok, r.amount)
				okSum += r.amount
			case r.unknown():
				maybe = append(maybe, r.amount)
			}
		}
		if !subsetSums(maybe)[refunded-okSum] {
			t.Errorf("order %s: upstream refunded %d; confirmed refunds %v, unknown ones %v: a refund moved twice, or a confirmed one never", o.id, refunded, ok, maybe)
		}
		capturedOK := slices.ContainsFunc(o.capture, func(i *intent) bool { return i.final == "" })
		cancelledOK := slices.ContainsFunc(o.cancel, func(i *intent) bool { return i.final == "" })
		if capturedOK && captured != o.amount {
			t.Errorf("order %s: the capture was confirmed, upstream captured %d of %d", o.id, captured, o.amount)
		}
		if cancelledOK && status != "cancelled" {
			t.Errorf("order %s: the cancel was confirmed, upstream status %s", o.id, status)
		}
		if capturedOK && cancelledOK {
			t.Errorf("order %s: both a capture and a cancel were confirmed", o.id)
		}
		if refused(o.capture) && refused(o.cancel) && !capturedOK && !cancelledOK && !o.captured && status != "authorized" {
			t.Errorf("order %s: no change was confirmed or unknown, upstream status %s", o.id, status)
		}
		// The gateway reads the order as the upstream holds it.
		var d struct {
			Node *struct {
				RefundedAmount struct {
					Amount any `json:"amount"`
				} `json:"refundedAmount"`
				CapturedAmount struct {
					Amount any `json:"amount"`
				} `json:"capturedAmount"`
			} `json:"node"`
		}
		api.query(t, `query($id: ID!) { node(id: $id) { ... on Order { refundedAmount { amount } capturedAmount { amount } } } }`,
			map[string]any{"id": o.id}).decode(t, &d)
		if d.Node == nil || num(d.Node.RefundedAmount.Amount) != refunded || num(d.Node.CapturedAmount.Amount) != captured {
			t.Errorf("order %s through the gateway %+v, upstream refunded %d captured %d", o.id, d.Node, refunded, captured)
		}
	}

	// Cards: Anna's corporation's cards, one per intent at most.
	anna.query(t, `{ cards { id } }`, nil).decode(t, &cl)
	newCards := map[string]bool{}
	for _, c := range cl.Cards {
		if !cardsBefore[c.ID] {
			newCards[c.ID] = true
		}
	}
	if len(cards) > 0 {
		oneRecord("cards", cards, newCards)
	}

	// Authorisations: the card's transactions, one group per intent
	// (amounts are unique).
	var tx struct {
		Card struct {
			Transactions struct {
				Edges []struct {
					Node struct {
						Amount struct {
							Amount int64 `json:"amount"`
						} `json:"amount"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"transactions"`
		} `json:"card"`
	}
	anna.query(t, `query($id: ID!) { card(id: $id) { transactions { edges { node { amount { amount } } } } } }`, map[string]any{"id": simCard.ID}).decode(t, &tx)
	authorised := map[int64]map[string]bool{}
	for i, e := range tx.Card.Transactions.Edges {
		a := e.Node.Amount.Amount
		if authorised[a] == nil {
			authorised[a] = map[string]bool{}
		}
		id := fmt.Sprint("auth-", a)
		if len(authorised[a]) > 0 {
			id = fmt.Sprint("auth-", a, "#", i) // a second authorisation of one intent
		}
		authorised[a][id] = true
	}
	for _, it := range sims {
		oneRecord(fmt.Sprintf("authorisations of %d", it.amount), []*intent{it}, authorised[it.amount])
	}

	// Requisites: the corporation's new records, one at most per intent.
	newRequisites := map[string]bool{}
	for id := range corporationRequisites(t, anna) {
		if !requisitesBefore[id] {
			newRequisites[id] = true
		}
	}
	oneRecord("requisites", attaches, newRequisites)
}

// orderNodeID is the global id of an upstream order (docs/relay.md); only
// tests look inside ids.
func orderNodeID(raw string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("Order:" + raw))
}
