package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Amounts and lists: money is a bounded scalar every client reads exactly,
// totals are computed without overflow, every other Int keeps GraphQL's
// 32 bits, a failed listing costs only its own field, and a connection's
// pageInfo and totalCount cost once per page.

// maxMinorUnits is the largest MinorUnits value, 2^53-1: the largest
// integer every JSON client (JavaScript's Number included) reads exactly.
const maxMinorUnits = 1<<53 - 1

// wantBadInput checks a BAD_USER_INPUT error naming field (when field is
// not empty).
func wantBadInput(t *testing.T, r gqlResponse, field string) {
	t.Helper()
	if r.code() != "BAD_USER_INPUT" {
		t.Fatalf("want BAD_USER_INPUT, got data %s errors %+v", r.Data, r.Errors)
	}
	if field != "" && r.Errors[0].Extensions["field"] != field {
		t.Fatalf("want field %q, got %+v", field, r.Errors[0].Extensions)
	}
}

func TestOrderAmountsAreBoundedAndTotalsCannotOverflow(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	g = g.as(g.signInAPI(t))
	order := func(items map[string]any) map[string]any {
		card := map[string]any{"card": map[string]any{"token": uniq("tok_ok_")}}
		return map[string]any{"input": map[string]any{"currency": "EUR", "items": items, "payment": card}}
	}
	item := func(amount any, quantity any) map[string]any {
		return map[string]any{"name": "x", "amount": amount, "quantity": quantity}
	}
	cases := []struct {
		name  string
		vars  map[string]any
		field string
	}{
		// The probe's orders: 4 × 2^62 wrapped to a total of 0, and
		// int64-max + 2 to -9.2e18; both were authorised.
		{"4 × 2^62", order(map[string]any{"item": item(int64(1)<<62, 4)}), "input.items.item.amount"},
		{"int64 max + 2", order(map[string]any{"list": []any{
			item(json.Number("9223372036854775807"), 1), item(2, 1)}}), "input.items.list[0].amount"},
		{"2^53, one above the bound", order(map[string]any{"amount": int64(maxMinorUnits + 1)}), "input.items.amount"},
		{"an amount as a string", order(map[string]any{"amount": "1000"}), "input.items.amount"},
		{"an amount with a fraction", order(map[string]any{"amount": json.Number("10.5")}), "input.items.amount"},
		{"a quantity as a string", order(map[string]any{"item": item(100, "2")}), "input.items.item.quantity"},
		{"a quantity beyond 32 bits", order(map[string]any{"item": item(100, int64(1)<<40)}), "input.items.item.quantity"},
		// Each amount and quantity in range, the total not: 100 items of
		// 2^53-1 × 1,000,000 overflow int64 many times over.
		{"a total beyond the bound", order(map[string]any{"list": func() []any {
			var l []any
			for range 100 {
				l = append(l, item(int64(maxMinorUnits), 1_000_000))
			}
			return l
		}()}), "input.items"},
		{"a total one above the bound", order(map[string]any{"list": []any{
			item(int64(maxMinorUnits-1), 1), item(2, 1)}}), "input.items"},
		{"a capture of 2^62", map[string]any{"input": map[string]any{"orderId": "x", "amount": int64(1) << 62}}, "input.amount"},
	}
	g.resetStats(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := createOrderMutation
			if strings.HasPrefix(tc.name, "a capture") {
				q = `mutation($input: CaptureOrderInput!) { captureOrder(input: $input) { orderId } }`
			}
			wantBadInput(t, g.query(t, q, tc.vars), tc.field)
		})
	}
	if s := g.stats(t); s.Total != 0 {
		t.Errorf("refused amounts reached the upstream: %+v", s.Routes)
	}

	// The bound itself is accepted, authorised and read back exactly.
	r := g.query(t, createOrderMutation, order(map[string]any{"list": []any{
		item(int64(maxMinorUnits-2), 1), item(1, 2)}}))
	var d struct {
		CreateOrder struct {
			Typename string `json:"__typename"`
			Amount   struct {
				Amount json.Number `json:"amount"`
			} `json:"amount"`
			Items struct {
				Total json.Number `json:"total"`
			} `json:"items"`
		} `json:"createOrder"`
	}
	r.decode(t, &d)
	want := fmt.Sprint(int64(maxMinorUnits))
	if d.CreateOrder.Typename != "Order" || d.CreateOrder.Amount.Amount.String() != want || d.CreateOrder.Items.Total.String() != want {
		t.Fatalf("an order of 2^53-1: %s, want amount and total %s", r.Data, want)
	}
}

func TestConversionAmountsAreBoundedAndComputedWithoutOverflow(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.as(g.signInStaff(t))
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	const convertLimitID = "b3000000-0000-4000-8000-000000000002"

	// 2^62 and a string are refused at the gateway: resolvers'
	// TestConversionInputRules.

	// With the convert limit removed, only the bank's own arithmetic stands
	// between 184 billion USD and the EUR wallet: 18,446,744,073,710 × the
	// rate table's 1,000,000 wraps int64 to 448,384, which bought it for
	// 2 cents.
	staff.query(t, `mutation($input: DeleteLimitInput!) { deleteLimit(input: $input) { id } }`,
		map[string]any{"input": map[string]any{"corporationId": demoCorpID, "id": convertLimitID}}).decode(t, &struct{}{})
	eur0, _ := anna.balance(t, demoCorpID, demoEURWalletID)
	usd0, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	for _, amount := range []int64{18_446_744_073_710, maxMinorUnits} {
		res, r := anna.convert(t, map[string]any{"sourceWalletId": demoEURWalletID, "amount": amount, "currency": "USD"})
		if len(r.Errors) > 0 || res.Typename != "ConversionRefused" || res.Reason != "INSUFFICIENT_FUNDS" {
			t.Fatalf("converting %d USD cents: %+v %+v, want INSUFFICIENT_FUNDS", amount, res, r.Errors)
		}
	}
	eur1, _ := anna.balance(t, demoCorpID, demoEURWalletID)
	usd1, _ := anna.balance(t, demoCorpID, demoUSDWalletID)
	if eur1 != eur0 || usd1 != usd0 {
		t.Errorf("refused conversions moved money: EUR %d -> %d, USD %d -> %d", eur0, eur1, usd0, usd1)
	}
}

func TestIntIsThirtyTwoBits(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	staff := g.as(g.signInStaff(t))
	const q = `query($n: Int) { persons(first: $n) { totalCount } }`
	cases := []struct {
		name  string
		query string
		vars  map[string]any
		field string
	}{
		{"a variable of 2^31", q, map[string]any{"n": int64(1) << 31}, "first"},
		{"a variable of -2^31-1", q, map[string]any{"n": -(int64(1) << 31) - 1}, "first"},
		{"a string variable", q, map[string]any{"n": "5"}, "first"},
		{"a literal of 2^31", `{ persons(first: 2147483648) { totalCount } }`, nil, "first"},
		{"a nested Int of 2^31", `mutation($input: UpdateLimitInput!) { updateLimit(input: $input) { id } }`,
			map[string]any{"input": map[string]any{"corporationId": demoCorpID, "id": "b3000000-0000-4000-8000-000000000002",
				"limitSet": map[string]any{"dailySuccessfulVelocity": int64(1) << 31}}}, "input.limitSet.dailySuccessfulVelocity"},
		{"a nested string", `mutation($input: UpdateLimitInput!) { updateLimit(input: $input) { id } }`,
			map[string]any{"input": map[string]any{"corporationId": demoCorpID, "id": "b3000000-0000-4000-8000-000000000002",
				"limitSet": map[string]any{"dailySuccessfulVelocity": "5"}}}, "input.limitSet.dailySuccessfulVelocity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantBadInput(t, staff.query(t, tc.query, tc.vars), tc.field)
		})
	}
	var d struct {
		Persons struct {
			TotalCount int `json:"totalCount"`
		} `json:"persons"`
	}
	staff.query(t, q, map[string]any{"n": 100}).decode(t, &d)
	if d.Persons.TotalCount == 0 {
		t.Errorf("an Int in range is refused or lists nothing: %+v", d)
	}
}

func TestAmountFieldsAreMinorUnitsInTheSchema(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	var d struct {
		Schema struct {
			Types []struct {
				Name   string `json:"name"`
				Fields []struct {
					Name string  `json:"name"`
					Type typeRef `json:"type"`
				} `json:"fields"`
				InputFields []struct {
					Name string  `json:"name"`
					Type typeRef `json:"type"`
				} `json:"inputFields"`
			} `json:"types"`
		} `json:"__schema"`
	}
	g.query(t, `{ __schema { types { name
		fields { name type { name ofType { name ofType { name } } } }
		inputFields { name type { name ofType { name ofType { name } } } } } } }`, nil).decode(t, &d)
	moneyWords := []string{"amount", "total", "price", "balance", "fee"}
	// Customer.total is the payments upstream's number, to which its spec
	// gives no unit; the schema shows it as such.
	unitless := map[string]bool{"Customer.total": true}
	seen := 0
	for _, ty := range d.Schema.Types {
		if strings.HasPrefix(ty.Name, "__") {
			continue
		}
		check := func(field string, tr typeRef) {
			name := tr.named()
			lower := strings.ToLower(field)
			for _, w := range moneyWords {
				if strings.Contains(lower, w) && !strings.HasSuffix(lower, "count") && !unitless[ty.Name+"."+field] &&
					(name == "Int" || name == "Float") {
					t.Errorf("%s.%s is %s: money is MinorUnits (or a Money)", ty.Name, field, name)
				}
			}
			if name == "MinorUnits" {
				seen++
			}
		}
		for _, f := range ty.Fields {
			check(f.Name, f.Type)
		}
		for _, f := range ty.InputFields {
			check(f.Name, f.Type)
		}
	}
	if seen < 10 {
		t.Errorf("only %d fields are MinorUnits", seen)
	}
}

type typeRef struct {
	Name   *string  `json:"name"`
	OfType *typeRef `json:"ofType"`
}

func (r typeRef) named() string {
	for t := &r; t != nil; t = t.OfType {
		if t.Name != nil {
			return *t.Name
		}
	}
	return ""
}

func TestAFailedOrderListingLeavesTheRestOfTheAnswer(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api := g.as(g.signInAPI(t))
	g.sandbox(t, "POST", "/_sandbox/faults", map[string]any{"route": "GET /payments/v1/order", "error_rate": 1, "status": 500}, nil)
	t.Cleanup(func() { g.sandbox(t, "DELETE", "/_sandbox/faults", nil, nil) })

	r := api.query(t, `{
	  orders { id }
	  customers { id orders { id } }
	  currentCorporation { id wallets { id balance { amount } } }
	}`, nil)
	var d struct {
		Orders    []any `json:"orders"`
		Customers []struct {
			ID     string `json:"id"`
			Orders []any  `json:"orders"`
		} `json:"customers"`
		CurrentCorporation *struct {
			ID      string `json:"id"`
			Wallets []any  `json:"wallets"`
		} `json:"currentCorporation"`
	}
	if string(r.Data) == "null" || len(r.Data) == 0 {
		t.Fatalf("the order listing's failure erased the whole answer: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
	if d.CurrentCorporation == nil || len(d.CurrentCorporation.Wallets) == 0 {
		t.Errorf("the banking part is missing: %s", r.Data)
	}
	if len(d.Customers) == 0 {
		t.Errorf("the customer listing, which did not fail, is missing: %s", r.Data)
	}
	for _, c := range d.Customers {
		if c.Orders != nil {
			t.Errorf("customer %s has orders although the listing failed", c.ID)
		}
	}
	if d.Orders != nil {
		t.Errorf("orders answered although the listing failed: %s", r.Data)
	}
	paths := map[string]bool{}
	for _, e := range r.Errors {
		if e.Extensions["code"] != "UPSTREAM_UNAVAILABLE" {
			t.Errorf("want UPSTREAM_UNAVAILABLE, got %+v", e)
		}
		if len(e.Path) > 0 {
			paths[fmt.Sprint(e.Path[0])] = true
		}
	}
	if !paths["orders"] || !paths["customers"] || paths["currentCorporation"] {
		t.Errorf("errors are on %v, want orders and customers only", paths)
	}
}

func TestPageInfoAndTotalCountCostOncePerPage(t *testing.T) {
	t.Parallel()
	// A complexity limit of 1,500: a page of 100 card transactions whose
	// edge asks for 12 fields costs 1 + 100 × 12 + pageInfo (5) +
	// totalCount (1) + the card (1) = 1,208. Counted per item, pageInfo
	// and totalCount made it 1,802.
	g := startGateway(t, "-limits", "complexity=1500")
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var cards struct {
		Cards []struct {
			ID string `json:"id"`
		} `json:"cards"`
	}
	anna.query(t, `{ cards { id } }`, nil).decode(t, &cards)
	if len(cards.Cards) == 0 {
		t.Fatal("anna has no card")
	}
	const page = `transactions(first: 100) {
	  totalCount
	  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	  edges { cursor node { id upstreamId type amount { amount currency } status description createdAt } }
	}`
	var d struct {
		Card struct {
			Transactions struct {
				TotalCount int   `json:"totalCount"`
				Edges      []any `json:"edges"`
			} `json:"transactions"`
		} `json:"card"`
	}
	anna.query(t, `query($id: ID!) { card(id: $id) { `+page+` } }`, map[string]any{"id": cards.Cards[0].ID}).decode(t, &d)
	if d.Card.Transactions.TotalCount == 0 || len(d.Card.Transactions.Edges) == 0 {
		t.Errorf("no transactions: %+v", d)
	}
	// The page size still multiplies what each edge asks for: two such
	// pages (2,415) are over the limit.
	r := anna.query(t, `query($id: ID!) { card(id: $id) { a: `+page+` b: `+page+` } }`, map[string]any{"id": cards.Cards[0].ID})
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Errorf("two pages of 100: want COMPLEXITY_LIMIT_EXCEEDED, got %+v", r.Errors)
	}
}
