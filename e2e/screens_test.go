package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/relay"
)

// The representative screens of docs/screens.md: each screen's query lives
// in testdata/screens/<name>.graphql, runs here against the sandbox as the
// principal that uses the screen, and costs exactly the upstream calls
// listed, no more: each list says why that count is the minimum. The page
// shows the same queries and counts (TestScreensPageMatchesTheTests).

// Upstream routes as the sandbox's stats name them.
const (
	routeCurrentCorporation = "GET /banking/v2/corporations/current"
	routeCorporations       = "GET /banking/v2/corporations"
	routeWallets            = "GET /banking/v2/corporations/{id}/wallets"
	routeInvoices           = "GET /banking/v2/corporations/{id}/invoices"
	routeCards              = "GET /banking/v2/cards"
	routeCardTransactions   = "GET /banking/v2/cards/{id}/transactions"
	routePersons            = "GET /banking/v2/persons"
	routeCustomers          = "GET /payments/v1/customer"
	routeOrders             = "GET /payments/v1/order"
	routeEvent              = "GET /payments/v3/events/{id}"
	routePendingActions     = "GET /payments/v3/pending_actions"
	routeWalletTransactions = "GET /banking/v2/corporations/{id}/wallets/{walletId}/transactions"
	routeKYCDocuments       = "GET /banking/v2/corporations/{id}/kyc-documents"
)

// screenCost is what one screen costs upstream: every route's count.
type screenCost map[string]int

func (c screenCost) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// screens are the representative screens with their exact cost for the
// data their test makes. The dashboard's cost grows by one call per card
// (transactions); the test gives the demo corporation 6 cards on 3 wallets.
var screens = []struct {
	name string
	cost screenCost
}{
	{"corporation_dashboard", screenCost{
		// The viewer's corporation: the one route that answers "mine"
		// for a person (its name is on the screen, so it is read).
		routeCurrentCorporation: 1,
		// Wallets are listed per corporation, one listing for all of
		// them; each wallet's requisites arrive inside that listing.
		routeWallets: 1,
		// One listing of the viewer's cards serves every wallet's cards
		// (filtered by funding wallet), not one call per wallet.
		routeCards: 1,
		// The first page of persons serves both the cardholders (the
		// Person loader) and Corporation.persons: one read for both.
		routePersons: 1,
		// Invoices are listed per corporation: one.
		routeInvoices: 1,
		// Transactions exist only per card (GET /cards/:id/transactions,
		// no listing across cards): one per card, the only part that grows.
		routeCardTransactions: 6,
	}},
	{"corporation_dashboard_deferred", screenCost{
		// The dashboard with each wallet's cards deferred costs what the
		// undeferred one does: the deferred fragments batch as one.
		routeCurrentCorporation: 1,
		routeWallets:            1,
		routeCards:              1,
		routePersons:            1,
		routeInvoices:           1,
		routeCardTransactions:   6,
	}},
	{"card_list", screenCost{
		// One listing of the viewer's cards.
		routeCards: 1,
		// Every cardholder from one page of persons (not one read each).
		routePersons: 1,
		// Every funding wallet from the corporation's one wallet listing
		// (not one read per wallet; the spec has no wallet read by id).
		routeWallets: 1,
	}},
	{"corporation_dashboard_nodes", screenCost{
		// The dashboard from nodes(ids: [its corporation]) costs what
		// the typed one does, with one route swapped: a corporation by
		// id is found in the listing of the corporations the viewer
		// sees (the spec has no read by id; for a person it is one page),
		// where currentCorporation reads /corporations/current. Both are
		// one call; everything below the corporation is the same.
		routeCorporations:     1,
		routeWallets:          1,
		routeCards:            1,
		routePersons:          1,
		routeInvoices:         1,
		routeCardTransactions: 6,
	}},
	{"card_list_nodes", screenCost{
		// Every card of nodes(ids:) from the one card listing (the
		// viewer's cards, so also the scope check), as cards reads it;
		// then the same one person page and one wallet listing.
		routeCards:   1,
		routePersons: 1,
		routeWallets: 1,
	}},
	{"customers_nodes", screenCost{
		// Several customers by id: one listing serves them all (nodes
		// reads it up front when it names two or more, so a split batch
		// window cannot turn one key into a read by id), and their
		// orders come from the same one listing by date as customers'.
		routeCustomers: 1,
		routeOrders:    1,
	}},
	{"event_feed", screenCost{
		// Nothing: the feed reads the gateway's own event stream, and each
		// payments event there was enriched once, when its webhook came in
		// (GET /events/{id}, and GET /pending_actions?event_id= for a
		// pending-action event). The feed's events and pending actions are
		// those stream records; reading them again per view would cost one
		// event read and one pending-action read per event shown.
	}},
	{"event_feed_nodes", screenCost{
		// The feed's ten events by id: node reads an event as event(id)
		// does, from the upstream, one read per event (the spec reads
		// events by id only; the gateway's stream has no look-up by id
		// and holds only recent events). 10 events:
		routeEvent: 10,
		// and the current pending action of each pending-action event
		// (one per distinct event): the five PendingActionCreated and
		// PendingActionCompleted. The other five are tied to none, so
		// they show none without asking.
		routePendingActions: 5,
	}},
	{"account", screenCost{
		// The viewer's corporation, as on the dashboard.
		routeCurrentCorporation: 1,
		// The wallet, with its bank and requisites, from the one wallet
		// listing (the spec has no wallet read by id for a person's
		// screen to prefer).
		routeWallets: 1,
		// One page of the wallet's history (the sandbox's listing).
		routeWalletTransactions: 1,
	}},
	{"onboarding", screenCost{
		// The corporation carries its onboarding progress, its KYC data
		// provider and who created and changed it.
		routeCurrentCorporation: 1,
		// KYC documents are listed per corporation, each with who
		// uploaded and who last changed it.
		routeKYCDocuments: 1,
	}},
	{"customers", screenCost{
		// One listing of the merchant's customers; saved payment methods
		// come inside each customer record.
		routeCustomers: 1,
		// One listing of orders for the date range, grouped by customer:
		// the spec lists orders by date, not by customer.
		routeOrders: 1,
	}},
}

func screenQuery(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screens", name+".graphql"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runScreen runs a screen's query with fresh stats and asserts it costs
// exactly want, route by route, and returns the response.
func runScreen(t *testing.T, g, as *testGateway, name string) gqlResponse {
	t.Helper()
	return runScreenWith(t, g, as, name, nil)
}

// runScreenWith is runScreen with variables (the ids a nodes screen
// starts from, taken from an earlier answer).
func runScreenWith(t *testing.T, g, as *testGateway, name string, vars map[string]any) gqlResponse {
	t.Helper()
	var want screenCost
	for _, s := range screens {
		if s.name == name {
			want = s.cost
		}
	}
	if want == nil {
		t.Fatalf("no screen %q", name)
	}
	g.resetStats(t)
	r := as.query(t, screenQuery(t, name), vars)
	if len(r.Errors) > 0 {
		t.Fatalf("%s: errors %+v", name, r.Errors)
	}
	s := g.stats(t)
	if !maps.Equal(map[string]int(want), s.Routes) || s.Total != want.total() {
		t.Errorf("%s cost %d upstream calls %v; want %d: %v", name, s.Total, s.Routes, want.total(), want)
	}
	return r
}

// sameAsTyped asserts that a nodes screen shows exactly what its typed
// screen showed: the same objects, fields and values, in the same order.
func sameAsTyped(t *testing.T, name string, nodes, typed gqlResponse, typedField string) {
	t.Helper()
	var n struct {
		Nodes []any `json:"nodes"`
	}
	nodes.decode(t, &n)
	var ty map[string]any
	typed.decode(t, &ty)
	want := ty[typedField]
	if obj, ok := want.(map[string]any); ok {
		want = []any{obj}
	}
	if !reflect.DeepEqual(any(n.Nodes), want) {
		a, _ := json.Marshal(n.Nodes)
		b, _ := json.Marshal(want)
		t.Errorf("%s shows other data than its typed screen:\n nodes: %s\n typed: %s", name, a, b)
	}
}

// idsOf returns the id of every object in a typed screen's list (or of the
// one object), for the nodes variant to start from.
func idsOf(t *testing.T, typed gqlResponse, field string) []string {
	t.Helper()
	var ty map[string]json.RawMessage
	typed.decode(t, &ty)
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(ty[field], &list); err != nil {
		var one struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ty[field], &one); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		list = append(list, one)
	}
	ids := make([]string, len(list))
	for i, o := range list {
		ids[i] = o.ID
	}
	if len(ids) == 0 {
		t.Fatalf("the typed screen shows no %s", field)
	}
	return ids
}

// cardholders answers the viewer's corporation and two persons who hold its
// cards already (so may be given more: not every person may hold a card).
func cardholders(t *testing.T, g *testGateway) (string, []string) {
	t.Helper()
	var d struct {
		CurrentCorporation struct {
			ID    string `json:"id"`
			Cards []struct {
				Cardholder struct {
					ID string `json:"id"`
				} `json:"cardholder"`
			} `json:"cards"`
		} `json:"currentCorporation"`
	}
	g.query(t, `{ currentCorporation { id cards { cardholder { id } } } }`, nil).decode(t, &d)
	var ids []string
	for _, c := range d.CurrentCorporation.Cards {
		if !slices.Contains(ids, c.Cardholder.ID) {
			ids = append(ids, c.Cardholder.ID)
		}
	}
	if len(ids) < 2 {
		t.Fatalf("the corporation's cards have %d cardholders, want two", len(ids))
	}
	return d.CurrentCorporation.ID, ids
}

func TestScreenCorporationDashboard(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.signInStaff(t)

	// Two more card wallets with two cards each (on two cardholders), so
	// that one wallet listing, one card listing and one person page are
	// seen to serve several of each.
	corpID, holders := cardholders(t, anna)
	for i := range 2 {
		wallet := g.createWallet(t, staff, map[string]any{"corporationId": corpID,
			"adapter": "ADAPTER_A", "purpose": "CARD", "name": fmt.Sprintf("Screen cards %d", i)})
		for j := range 2 {
			anna.issueCard(t, map[string]any{"fundingWalletId": wallet, "cardholderId": holders[j],
				"expiryMonth": 12, "expiryYear": 2031, "displayName": fmt.Sprintf("Screen card %d.%d", i, j)})
		}
	}

	var d struct {
		CurrentCorporation struct {
			Wallets []struct {
				ID    string `json:"id"`
				Cards []struct {
					ID         string `json:"id"`
					Cardholder *struct {
						FirstName string `json:"firstName"`
					} `json:"cardholder"`
					Transactions struct {
						Edges []struct {
							Node struct {
								ID string `json:"id"`
							} `json:"node"`
						} `json:"edges"`
					} `json:"transactions"`
				} `json:"cards"`
			} `json:"wallets"`
			Persons  []struct{ ID string } `json:"persons"`
			Invoices []struct{ ID string } `json:"invoices"`
		} `json:"currentCorporation"`
	}
	typed := runScreen(t, g, anna, "corporation_dashboard")
	typed.decode(t, &d)
	// The same screen with the cards deferred, as one JSON answer.
	var deferred, undeferred any
	runScreen(t, g, anna, "corporation_dashboard_deferred").decode(t, &deferred)
	typed.decode(t, &undeferred)
	if !reflect.DeepEqual(deferred, undeferred) {
		t.Errorf("the deferred dashboard as one answer shows other data than the undeferred one")
	}
	// The same screen from nodes(ids: [the corporation]).
	byNodes := runScreenWith(t, g, anna, "corporation_dashboard_nodes",
		map[string]any{"ids": idsOf(t, typed, "currentCorporation")})
	sameAsTyped(t, "corporation_dashboard_nodes", byNodes, typed, "currentCorporation")

	cards, walletsWithCards, withTransactions := 0, 0, 0
	for _, w := range d.CurrentCorporation.Wallets {
		if len(w.Cards) > 0 {
			walletsWithCards++
		}
		for _, c := range w.Cards {
			cards++
			if c.Cardholder == nil || c.Cardholder.FirstName == "" {
				t.Errorf("card %s has no cardholder", c.ID)
			}
			if len(c.Transactions.Edges) > 3 {
				t.Errorf("card %s shows %d transactions, asked for 3", c.ID, len(c.Transactions.Edges))
			}
			if len(c.Transactions.Edges) > 0 {
				withTransactions++
			}
		}
	}
	// The cost above holds for this data: 6 cards on 3 wallets.
	if cards != 6 || walletsWithCards != 3 {
		t.Errorf("the dashboard shows %d cards on %d wallets; the test made 6 on 3", cards, walletsWithCards)
	}
	if withTransactions == 0 || len(d.CurrentCorporation.Persons) < 2 {
		t.Errorf("the dashboard shows %d cards with transactions and %d persons", withTransactions, len(d.CurrentCorporation.Persons))
	}
}

func TestScreenCardList(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.signInStaff(t)

	// A second card wallet and cards for two cardholders, so that the
	// list spans several wallets and cardholders.
	corpID, holders := cardholders(t, anna)
	wallet := g.createWallet(t, staff, map[string]any{"corporationId": corpID,
		"adapter": "ADAPTER_A", "purpose": "CARD", "name": "Screen cards"})
	for j := range 2 {
		anna.issueCard(t, map[string]any{"fundingWalletId": wallet, "cardholderId": holders[j],
			"expiryMonth": 12, "expiryYear": 2031, "displayName": fmt.Sprintf("Screen card %d", j)})
	}

	var d struct {
		Cards []struct {
			ID         string `json:"id"`
			Cardholder *struct {
				ID string `json:"id"`
			} `json:"cardholder"`
			FundingWallet *struct {
				ID string `json:"id"`
			} `json:"fundingWallet"`
		} `json:"cards"`
	}
	typed := runScreen(t, g, anna, "card_list")
	typed.decode(t, &d)
	// The same list from nodes(ids: [every card]).
	byNodes := runScreenWith(t, g, anna, "card_list_nodes", map[string]any{"ids": idsOf(t, typed, "cards")})
	sameAsTyped(t, "card_list_nodes", byNodes, typed, "cards")
	seenHolders, wallets := map[string]bool{}, map[string]bool{}
	for _, c := range d.Cards {
		if c.Cardholder == nil || c.FundingWallet == nil {
			t.Fatalf("card %s lacks its cardholder or funding wallet: %+v", c.ID, c)
		}
		seenHolders[c.Cardholder.ID] = true
		wallets[c.FundingWallet.ID] = true
	}
	if len(d.Cards) < 4 || len(seenHolders) < 2 || len(wallets) < 2 {
		t.Errorf("the list shows %d cards of %d cardholders on %d wallets; want several of each", len(d.Cards), len(seenHolders), len(wallets))
	}
}

func TestScreenCustomers(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	// An API client operates payments by default.
	api := g.as(g.signInAPI(t))

	var d struct {
		Customers []struct {
			ID             string                   `json:"id"`
			PaymentMethods []struct{ Token string } `json:"paymentMethods"`
			Orders         []struct{ ID string }    `json:"orders"`
		} `json:"customers"`
	}
	typed := runScreen(t, g, api, "customers")
	typed.decode(t, &d)
	// The same screen from nodes(ids: [every customer]).
	byNodes := runScreenWith(t, g, api, "customers_nodes", map[string]any{"ids": idsOf(t, typed, "customers")})
	sameAsTyped(t, "customers_nodes", byNodes, typed, "customers")
	withOrders, withMethods := 0, 0
	for _, c := range d.Customers {
		if len(c.Orders) > 0 {
			withOrders++
		}
		if len(c.PaymentMethods) > 0 {
			withMethods++
		}
	}
	// The seeded merchant: several customers with orders and saved cards,
	// so that one listing of each is seen to serve them all.
	if withOrders < 2 || withMethods < 2 {
		t.Errorf("%d customers, %d with orders, %d with saved methods; want several of each", len(d.Customers), withOrders, withMethods)
	}
}

// TestScreenEventFeed is a payments operator's feed of recent events with
// the pending actions they opened: the triggers make ten events on the
// stream (four individuals submitted, each opening a pending action; one
// action completed, one individual activated), the feed shows them all and
// costs no upstream call.
func TestScreenEventFeed(t *testing.T) {
	g := liveGateway(t)
	api := g.as(g.signInAPI(t))

	// Each trigger starts from a new individual: submitting the form emits
	// IndividualOnboardingDataProvided and PendingActionCreated, so these
	// four make 2 + 2 + 3 + 3 = 10 events.
	const made = 10
	var triggered []sandboxEvent
	for _, name := range []string{"PendingActionCreated", "PendingActionCreated", "PendingActionCompleted", "IndividualActivated"} {
		var e sandboxEvent
		g.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": name}, &e)
		triggered = append(triggered, e)
	}
	// Wait until every event is on the stream: its enrichment (the
	// upstream reads of intake) is then done and cannot land in the count.
	deadline := time.Now().Add(30 * time.Second)
	for len(api.history(t, 100, nil, nil).Edges) < made {
		if time.Now().After(deadline) {
			t.Fatal("the triggered events never all reached the event stream")
		}
		time.Sleep(20 * time.Millisecond)
	}

	type pendingAction struct {
		ID      string `json:"id"`
		EventID string `json:"eventId"`
		Status  string `json:"status"`
	}
	var d struct {
		EventHistory struct {
			Edges []struct {
				Source string `json:"source"`
				Node   struct {
					ID             string          `json:"id"`
					UpstreamID     string          `json:"upstreamId"`
					Name           string          `json:"name"`
					IndividualID   string          `json:"individualId"`
					PendingActions []pendingAction `json:"pendingActions"`
				} `json:"node"`
			} `json:"edges"`
			PageInfo pageInfo `json:"pageInfo"`
		} `json:"eventHistory"`
	}
	typed := runScreen(t, g, api, "event_feed")
	typed.decode(t, &d)

	edges := d.EventHistory.Edges
	if len(edges) != made || d.EventHistory.PageInfo.HasNextPage {
		t.Fatalf("the feed shows %d events (more: %v); the triggers made %d", len(edges), d.EventHistory.PageInfo.HasNextPage, made)
	}
	names := map[string]int{}
	shown := map[string]bool{}
	for _, e := range edges {
		n := e.Node
		names[n.Name]++
		shown[n.UpstreamID] = true
		if e.Source != "payments" || n.IndividualID == "" {
			t.Errorf("event %s (%s) from %q without its individual", n.UpstreamID, n.Name, e.Source)
		}
		// A pending-action event shows its action, read at intake; the
		// others have none.
		want := 0
		if strings.HasPrefix(n.Name, "PendingAction") {
			want = 1
		}
		if len(n.PendingActions) != want {
			t.Fatalf("%s shows %d pending actions, want %d: %+v", n.Name, len(n.PendingActions), want, n.PendingActions)
		}
		if n.Name == "PendingActionCompleted" && n.PendingActions[0].Status != "COMPLETED" {
			t.Errorf("the completed action shows as %s", n.PendingActions[0].Status)
		}
		if n.Name == "PendingActionCreated" && n.PendingActions[0].EventID != n.ID {
			t.Errorf("a created action names event %s, not the event %s that created it", n.PendingActions[0].EventID, n.ID)
		}
	}
	for _, e := range triggered {
		if !shown[e.ID] {
			t.Errorf("the triggered %s (%s) is not in the feed", e.Name, e.ID)
		}
	}
	if names["IndividualOnboardingDataProvided"] != 4 || names["PendingActionCreated"] != 4 ||
		names["PendingActionCompleted"] != 1 || names["IndividualActivated"] != 1 {
		t.Errorf("the feed's events by name: %v", names)
	}

	// The same feed from nodes(ids: [its events]): the same events and
	// pending actions, read from the upstream.
	var feed struct {
		EventHistory struct {
			Edges []struct {
				Node map[string]any `json:"node"`
			} `json:"edges"`
		} `json:"eventHistory"`
	}
	typed.decode(t, &feed)
	ids := make([]string, len(edges))
	feedNodes := make([]any, len(edges))
	for i, e := range edges {
		ids[i] = e.Node.ID
		feedNodes[i] = feed.EventHistory.Edges[i].Node
	}
	var n struct {
		Nodes []any `json:"nodes"`
	}
	runScreenWith(t, g, api, "event_feed_nodes", map[string]any{"ids": ids}).decode(t, &n)
	if !reflect.DeepEqual(n.Nodes, feedNodes) {
		a, _ := json.Marshal(n.Nodes)
		b, _ := json.Marshal(feedNodes)
		t.Errorf("event_feed_nodes shows other data than the feed:\n nodes: %s\n feed:  %s", a, b)
	}
}

// docs/screens.md and docs/screens-nodes.md show every screen's query and
// cost; they must say what the tests assert.
func TestScreensPageMatchesTheTests(t *testing.T) {
	var page string
	for _, name := range []string{"screens.md", "screens-nodes.md"} {
		raw, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		page += string(raw)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "screens", "*.graphql"))
	if len(files) != len(screens) {
		t.Errorf("%d query files, %d screens with a cost", len(files), len(screens))
	}
	for _, s := range screens {
		if !strings.Contains(page, strings.TrimSpace(screenQuery(t, s.name))) {
			t.Errorf("docs/screens.md lacks the query of %s (testdata/screens/%s.graphql)", s.name, s.name)
		}
		if !strings.Contains(page, fmt.Sprintf("`%s.graphql`: **%d upstream calls**", s.name, s.cost.total())) {
			t.Errorf("docs/screens.md does not give %s as %d upstream calls", s.name, s.cost.total())
		}
		for _, route := range slices.Sorted(maps.Keys(s.cost)) {
			if !strings.Contains(page, fmt.Sprintf("| `%s` | %d |", route, s.cost[route])) {
				t.Errorf("docs/screens.md lacks %s's row for %s: %d", s.name, route, s.cost[route])
			}
		}
	}
}

// TestCardTransactionsAreReadOncePerCardAndPage reaches every card of the
// corporation twice in one query (through its wallet and through the
// corporation's card list) with the same page, and once more with another
// page size: the same page of a card is one upstream read, another page
// is another.
func TestCardTransactionsAreReadOncePerCardAndPage(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	var d struct {
		CurrentCorporation struct {
			Cards []struct {
				ID string `json:"id"`
			} `json:"cards"`
		} `json:"currentCorporation"`
	}
	const page = `transactions(first: 3) { edges { node { id } } }`
	g.resetStats(t)
	anna.query(t, `{ currentCorporation {
	  wallets { cards { id `+page+` } }
	  cards { id `+page+` again: `+page+` other: transactions(first: 2) { edges { node { id } } } }
	} }`, nil).decode(t, &d)
	cards := len(d.CurrentCorporation.Cards)
	if cards < 2 {
		t.Fatalf("the demo corporation shows %d cards; want several", cards)
	}
	// One read of each card's first 3, asked for three times, and one of
	// its first 2: two per card.
	if n := g.stats(t).Routes[routeCardTransactions]; n != 2*cards {
		t.Errorf("%d cards, each asked for one page three times and another once, cost %d transaction reads; want %d", cards, n, 2*cards)
	}
}

// TestScreenAccount: a wallet's account screen, everything a "pay into this
// wallet" page and its history need, in three upstream calls.
func TestScreenAccount(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d struct {
		CurrentCorporation struct {
			Wallet struct {
				BankAddress *struct {
					Name string `json:"name"`
				} `json:"bankAddress"`
				Requisites   []struct{ Number string } `json:"requisites"`
				Transactions walletTxPage              `json:"transactions"`
			} `json:"wallet"`
		} `json:"currentCorporation"`
	}
	runScreenWith(t, g, anna, "account", map[string]any{"walletId": relay.ID(relay.Wallet, demoCorpID, demoEURWalletID)}).decode(t, &d)
	w := d.CurrentCorporation.Wallet
	if w.BankAddress == nil || w.BankAddress.Name == "" || len(w.Requisites) == 0 || w.Transactions.TotalCount == 0 || len(w.Transactions.Edges) == 0 {
		t.Errorf("account screen: %+v", w)
	}
}

// TestScreenOnboarding: what is left of a corporation's onboarding, and who
// did what, in two upstream calls.
func TestScreenOnboarding(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	var d struct {
		CurrentCorporation struct {
			IsOnboarded                bool `json:"isOnboarded"`
			IsInitialApplicationFilled bool `json:"isInitialApplicationFilled"`
		} `json:"currentCorporation"`
	}
	runScreen(t, g, ben, "onboarding").decode(t, &d)
	if c := d.CurrentCorporation; c.IsOnboarded || !c.IsInitialApplicationFilled {
		t.Errorf("onboarding screen: %+v", c)
	}
}
