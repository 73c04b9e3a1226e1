// Command peersfloor is the Go floor of the side-by-side query
// (../shared/peers): the least a Go server can do to answer it from the
// payments upstream. On each POST it reads the body, sends the customer
// listing and the order listing of the query's window at once (net/http's
// client, as the gateway's), decodes the fields the query selects
// (encoding/json), joins each customer's orders and writes the answer in
// the gateway's shape. No GraphQL, no session, no limit, no sharing: two
// upstream calls per query, as fingraph makes with sharing off.
//
// It is a measuring tool (bench/peers-terms.sh starts it beside fingraph
// and Tailcall): what it costs, in CPU and in latency under load on the
// same cores, is what the Go runtime, net/http and the two calls cost, the
// part of fingraph's figures that no change to the engine can remove.
//
//	go run ./bench/peersfloor -upstream http://127.0.0.1:19090/payments -addr 127.0.0.1:18383
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"net/url"
	"time"
)

type customer struct {
	ID      string `json:"id"`
	Number  string `json:"number"`
	Contact struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"contact"`
	Orders []order `json:"orders"`
}

type order struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Customer string `json:"-"`
	Amount   struct {
		Amount   int    `json:"amount"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// upstreamOrder is an order as the listing sends it.
type upstreamOrder struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Customer string `json:"customer"`
	Amount   int    `json:"amount"`
	Currency string `json:"currency"`
}

func main() {
	upstream := flag.String("upstream", "http://127.0.0.1:19090/payments", "the payments upstream")
	addr := flag.String("addr", "127.0.0.1:18383", "where to listen (loopback)")
	key := flag.String("key", "sk_sandbox_demo", "the payments private key")
	start := flag.String("start", "2026-08-01", "the order window's first day")
	end := flag.String("end", "2026-11-30", "the order window's last day")
	flag.Parse()
	f := &floor{
		client:    &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		customers: *upstream + "/v1/customer",
		orders:    *upstream + "/v1/order?" + url.Values{"start": {*start}, "end": {*end}}.Encode(),
		auth:      "Bearer " + *key,
	}
	srv := &http.Server{Addr: *addr, Handler: f, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

type floor struct {
	client                  *http.Client
	customers, orders, auth string
}

func (f *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16)); err != nil {
		http.Error(w, "cannot read the request", http.StatusBadRequest)
		return
	}
	var orders []upstreamOrder
	done := make(chan error, 1)
	go func() { done <- f.get(f.orders, &orders) }()
	var customers []customer
	err := f.get(f.customers, &customers)
	if oerr := <-done; err == nil {
		err = oerr
	}
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	byCustomer := make(map[string][]order, len(customers))
	for _, o := range orders {
		var out order
		out.ID, out.Status, out.Amount.Amount, out.Amount.Currency = o.ID, o.Status, o.Amount, o.Currency
		byCustomer[o.Customer] = append(byCustomer[o.Customer], out)
	}
	for i := range customers {
		customers[i].Orders = byCustomer[customers[i].ID]
		if customers[i].Orders == nil {
			customers[i].Orders = []order{}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"customers": customers}})
}

func (f *floor) get(u string, v any) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", f.auth)
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return &statusError{resp.StatusCode}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "status " + http.StatusText(e.code) }
