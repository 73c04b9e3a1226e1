package paymentsim

import (
	"encoding/json"
	"sort"
	"time"
)

type seedMethod struct {
	scheme, iin, last4 string
	expires            [2]int
}

type seedOrder struct {
	daysAgo  int
	number   string
	items    string // JSON
	currency string
	status   string
}

type seedCustomer struct {
	number  string
	contact string // JSON
	methods []seedMethod
	orders  []seedOrder
}

var (
	visa   = seedMethod{"visa", "424242", "4242", [2]int{12, 30}}
	master = seedMethod{"mastercard", "555555", "4444", [2]int{8, 29}}
	amex   = seedMethod{"amex", "378282", "0005", [2]int{3, 31}}
	visa2  = seedMethod{"visa", "400000", "0077", [2]int{6, 28}}
)

// seedData is the demo merchant: six customers, each with stored methods and
// orders in every status. Days are relative to the moment of seeding.
func seedData() []seedCustomer {
	return []seedCustomer{
		{"C-1001", `{"type":"person","name":"Anna Lindqvist","email":"anna.lindqvist@example.com","phone":"+46701234567","address":{"street":"Sveavägen 44","zip_code":"111 34","city":"Stockholm","country_code":"SE"}}`,
			[]seedMethod{visa, master}, []seedOrder{
				{19, "SO-5001", `{"name":"Annual plan","amount":12000}`, "EUR", statusCaptured},
				{9, "SO-5002", `[{"name":"Espresso beans 1 kg","amount":2490,"quantity":2},{"name":"Shipping","amount":590}]`, "EUR", statusAuthorized},
				{2, "SO-5003", `4500`, "EUR", statusRefunded},
			}},
		{"C-1002", `{"type":"organisation","identity_number":"556677-8899","name":"Brightwater Studio AB","email":"billing@brightwater.example","address":{"street":"Kungsgatan 12","zip_code":"411 19","city":"Göteborg","country_code":"SE"}}`,
			[]seedMethod{amex}, []seedOrder{
				{17, "SO-5004", `{"name":"Design retainer","amount":950000}`, "SEK", statusCaptured},
				{4, "SO-5005", `{"name":"Workshop day","amount":180000,"quantity":2}`, "SEK", statusAuthorized},
			}},
		{"C-1003", `{"type":"person","name":"Mateo García","email":"mateo.garcia@example.com","phone":"+34612345678","address":{"street":"Calle de Alcalá 101","zip_code":"28009","city":"Madrid","country_code":"ES"}}`,
			[]seedMethod{visa2}, []seedOrder{
				{14, "SO-5006", `[{"name":"Running shoes","amount":8999}]`, "EUR", statusCancelled},
			}},
		{"C-1004", `{"type":"organisation","name":"Nordlys Bakeri AS","email":"post@nordlysbakeri.example","address":{"street":"Storgata 5","zip_code":"0155","city":"Oslo","country_code":"NO"}}`,
			[]seedMethod{master, visa}, []seedOrder{
				{12, "SO-5007", `{"name":"Flour, 25 kg","amount":45000,"quantity":4}`, "NOK", statusCaptured},
				{6, "SO-5008", `{"name":"Oven service","amount":320000}`, "NOK", statusRefunded},
				{1, "SO-5009", `60000`, "NOK", statusAuthorized},
			}},
		{"C-1005", `{"type":"person","name":"Sophie Müller","email":"sophie.mueller@example.com","address":{"street":"Torstraße 140","zip_code":"10119","city":"Berlin","country_code":"DE"}}`,
			[]seedMethod{visa}, []seedOrder{
				{10, "SO-5010", `[{"name":"Yoga mat","amount":3900},{"name":"Water bottle","amount":1500,"quantity":2}]`, "EUR", statusCaptured},
				{3, "SO-5011", `{"name":"Class pass","amount":9900}`, "EUR", statusCancelled},
			}},
		{"C-1006", `{"type":"person","name":"Oliver Bennett","email":"oliver.bennett@example.com","phone":"+447700900123","address":{"street":"12 Deansgate","zip_code":"M3 2BQ","city":"Manchester","country_code":"GB"}}`,
			[]seedMethod{amex, visa2}, []seedOrder{
				{8, "SO-5012", `{"name":"Headphones","amount":14999}`, "GBP", statusRefunded},
				{5, "SO-5013", `2500`, "GBP", statusAuthorized},
			}},
	}
}

// Seed loads the demo merchant's customers, methods and orders, with the
// same ids on every start; calling it again does nothing. Its events are
// stored (oldest first, for the event listing) but never sent as webhooks,
// even when a webhook was registered before Seed.
func (s *Sim) Seed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seeded {
		return
	}
	s.seeded, s.seeding = true, true
	hook := s.webhook
	s.webhook = nil // never announce seed events
	defer func() { s.seeding, s.webhook = false, hook }()

	now := s.now().Truncate(time.Millisecond)
	base := len(s.events)
	for ci, sc := range seedData() {
		created := now.Add(-20*24*time.Hour + time.Duration(ci)*time.Hour)
		c := s.newCustomerLocked(sc.number, json.RawMessage(sc.contact), created)
		c.Balance, c.Subscriptions = seedAccount(sc.number, now)
		if ci == 0 {
			delete(s.custKeys, c.Key)
			c.Key = DemoCustomerKey
			s.custKeys[c.Key] = c.ID
		}
		for _, sm := range sc.methods {
			c.Methods = append(c.Methods, method{Type: "card", Scheme: sm.scheme, IIN: sm.iin, Last4: sm.last4,
				Expires: sm.expires, Acquirer: "sandbox-acquirer", Created: ts(created), Token: "pm_" + s.newID()})
		}
		for oi, so := range sc.orders {
			at := now.Add(-time.Duration(so.daysAgo)*24*time.Hour + time.Duration(oi)*time.Minute)
			amount, e := parseItems(json.RawMessage(so.items), "items")
			if e != nil {
				panic("payments seed: " + e.Message)
			}
			in := &orderIn{Number: so.number, Items: compact(json.RawMessage(so.items)), Amount: amount, Currency: so.currency}
			o := s.createOrderLocked(in, "", c, nil, paymentFromMethod(c.Methods[oi%len(c.Methods)]), at)
			var evs []string
			switch so.status {
			case statusCaptured:
				evs = []string{"capture"}
			case statusRefunded:
				evs = []string{"capture", "refund"}
			case statusCancelled:
				evs = []string{"cancel"}
			}
			for i, typ := range evs {
				name, amt, msg := applyEvent(o, typ, nil)
				if msg != "" {
					panic("payments seed: " + msg)
				}
				s.emitLocked(name, orderPayload(o, amt), at.Add(time.Duration(i+1)*time.Hour))
			}
		}
	}
	seeded := s.events[base:]
	sort.SliceStable(seeded, func(i, j int) bool { return seeded[i].CreatedAt < seeded[j].CreatedAt })
	for i, ev := range seeded {
		s.eventIdx[ev.ID] = base + i
	}
}

// seedAccount is the balance and the subscriptions of a seeded customer:
// Anna pays an annual plan and holds a small credit, Brightwater a monthly
// retainer with credit in two currencies; the others have neither, as a
// new customer has. Dates are relative to now, so a due date is always
// ahead.
func seedAccount(number string, now time.Time) ([]balanceEntry, []subscription) {
	day := func(d int) string { return now.AddDate(0, 0, d).UTC().Format("2006-01-02") }
	switch number {
	case "C-1001":
		return []balanceEntry{{Currency: "EUR", Amount: 1250}},
			[]subscription{{ID: "sub_demo_annual_plan", Start: day(-19), Items: json.RawMessage(`{"name":"Annual plan","amount":12000}`),
				Currency: "EUR", Callback: "https://merchant.example/subscriptions/annual", Due: day(346)}}
	case "C-1002":
		return []balanceEntry{{Currency: "SEK", Amount: 45000}, {Currency: "EUR", Amount: 300}},
			[]subscription{{ID: "sub_demo_retainer", Start: day(-17), Items: json.RawMessage(`[{"name":"Design retainer","amount":950000}]`),
				Currency: "SEK", Callback: "https://merchant.example/subscriptions/retainer", Due: day(13)}}
	}
	return nil, nil
}
