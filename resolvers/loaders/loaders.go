// Package loaders holds the per-operation dataloaders (graph-gophers/dataloader
// v7) through which resolvers reach the upstreams, so that a query touching
// N customers costs a fixed number of upstream calls rather than N. Loaders
// live for one GraphQL operation (one subscription event) and are never
// shared across operations or sessions: their caches hold one caller's view
// of the data at one moment.
package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Wait is how long a loader gathers keys before it calls the upstream. The
// library's 16 ms default is far longer than resolvers need to enqueue a
// list's worth of keys.
const Wait = time.Millisecond

// OrdersKey asks for one customer's orders created in [Start, End].
type OrdersKey struct {
	CustomerID string
	Start, End string // YYYY-MM-DD
}

// Loaders is the set of loaders of one request.
type Loaders struct {
	// Customer loads customers by id: one GET by id for a single key, one
	// listing for several (the spec has no batch read by ids).
	Customer Loader[string, *payments.Customer]
	// Orders loads customers' orders: one listing per distinct date range,
	// shared by every customer asked for in that range.
	Orders Loader[OrdersKey, []payments.Order]
	// PendingActionByEvent loads the pending action tied to each event: one
	// GET /v3/pending_actions?event_id= per distinct event, the spec's
	// preferred way (rule 4), deduplicated within the request.
	PendingActionByEvent Loader[string, *payments.PendingAction]

	// Banking holds the loaders of the banking upstream (banking.go).
	Banking
	// CardLoaders holds the loaders of cards and KYC documents (cards.go).
	CardLoaders
	// Money holds the loaders of wallets and money movement (wallets.go).
	Money

	payments *payments.Client
	listings *listings
	workers  *Workers
}

// listings memoises the request's upstream listings. A loader's batch
// window can split one list's keys into two batches when resolvers start
// slowly (a loaded machine, -race); the memo makes the second batch reuse
// the first listing, so a query's upstream cost is the same every time.
type listings struct {
	customers *memo[[]payments.Customer]
	orders    map[[2]string]*memo[[]payments.Order]
	mu        sync.Mutex
}

func (l *listings) ordersFor(start, end string) *memo[[]payments.Order] {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{start, end}
	if l.orders[k] == nil {
		l.orders[k] = &memo[[]payments.Order]{}
	}
	return l.orders[k]
}

// Option tunes New.
type Option func(*options)

type options struct {
	wait    time.Duration
	workers *Workers
}

// WithWait sets how long the loaders gather keys before a batch
// (Wait by default). Tests that assert how a batch is served lengthen it,
// so that a slow machine does not split their batch.
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// inputCapacity is the queue between Load and a batch: dataloader's default
// of 1,000 slots (8 KB) was made for every batch of every loader, ~5% of the
// bytes a README query allocates, for batches that hold a page of keys at
// most. A fuller queue only makes Load wait for the batch to read it.
const inputCapacity = 64

// New returns fresh loaders over the payments and banking clients.
func New(p *payments.Client, b *banking.Client, opts ...Option) *Loaders {
	o := options{wait: Wait}
	for _, f := range opts {
		f(&o)
	}
	personsFirst := newPersonsPage(b)
	l := &listings{customers: &memo[[]payments.Customer]{}, orders: map[[2]string]*memo[[]payments.Order]{}}
	ls := &Loaders{payments: p, listings: l, workers: o.workers}
	ls.Customer.init(customerBatch(p, l), o.wait)
	ls.Orders.init(ordersBatch(p, l), o.wait)
	ls.PendingActionByEvent.init(pendingActionBatch(p), o.wait)
	ls.Banking.init(b, o.wait, personsFirst)
	ls.CardLoaders.init(b, o.wait, personsFirst)
	ls.Money.init(b, o.wait)
	return ls
}

// PrimeAllCustomers reads the merchant's customer listing once for this
// request and primes the Customer loader with it. Resolvers call it when
// they know many customers are about to be loaded (a list of orders whose
// customers are selected), so that the cost does not depend on how the
// loader's time window happens to split the keys.
func (ls *Loaders) PrimeAllCustomers(ctx context.Context) error {
	all, err := ls.listings.customers.do(func() ([]payments.Customer, error) { return ls.payments.Customers.List(ctx) })
	if err != nil {
		return err
	}
	for i := range all {
		ls.Customer.Prime(ctx, all[i].ID, &all[i])
	}
	return nil
}

type ctxKey struct{}

// PerOperation is the gqlgen handler extension that gives every GraphQL
// operation its own loaders, and every event of a subscription its own.
// Loaders cannot live on the HTTP request: all operations of a websocket
// share its upgrade request's context, so they would share one cache for
// the socket's lifetime and a second run of a query would read the first
// run's (stale) data. The loaders are made when a resolver first asks for
// them: mutations, subscriptions and most small queries never do, and an
// idle websocket subscription would otherwise hold a whole set (~3.5 KB,
// docs/performance.md). Install it with the GraphQL server's Use.
type PerOperation struct {
	Payments *payments.Client
	Banking  *banking.Client
	// Options are passed to New for every operation's loaders.
	Options []Option
}

var (
	_ graphql.HandlerExtension     = PerOperation{}
	_ graphql.OperationInterceptor = PerOperation{}
	_ graphql.ResponseInterceptor  = PerOperation{}
)

// ExtensionName names the extension for gqlgen.
func (PerOperation) ExtensionName() string { return "PerOperationLoaders" }

// Validate accepts any schema.
func (PerOperation) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation gives the operation loaders of its own: a
// subscription's root resolver runs here, before any response.
func (e PerOperation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(e.fresh(ctx))
}

// InterceptResponse gives each response fresh loaders: a query or mutation
// has one response, so these are its operation's loaders; a subscription
// has one per event, and an event's fields must read the data as it is at
// that event, not as the first event's loaders cached it.
func (e PerOperation) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	return next(e.fresh(ctx))
}

func (e PerOperation) fresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, &lazy{p: e.Payments, b: e.Banking, opts: e.Options})
}

// lazy makes an operation's loaders on first use.
type lazy struct {
	once sync.Once
	l    *Loaders
	p    *payments.Client
	b    *banking.Client
	opts []Option
}

func (z *lazy) get() *Loaders {
	z.once.Do(func() { z.l = New(z.p, z.b, z.opts...) })
	return z.l
}

// For returns the loaders of the operation ctx belongs to.
func For(ctx context.Context) *Loaders {
	if l, ok := ctx.Value(ctxKey{}).(*lazy); ok {
		return l.get()
	}
	panic("loaders: no loaders in context; is loaders.PerOperation installed?")
}

func customerBatch(p *payments.Client, l *listings) dataloader.BatchFunc[string, *payments.Customer] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*payments.Customer] {
		out := make([]*dataloader.Result[*payments.Customer], len(ids))
		if _, ok := payments.CustomerKey(ctx); ok {
			// A customer session may see only itself: read `me` and answer
			// only the keys that are its own id, never a merchant listing.
			me, err := p.Customers.Get(ctx, "me")
			for i, id := range ids {
				r := &dataloader.Result[*payments.Customer]{Error: err}
				if err == nil && me.ID == id {
					r.Data = me
				}
				out[i] = r
			}
			return out
		}
		if len(ids) == 1 {
			c, err := p.Customers.Get(ctx, ids[0])
			if payments.IsNotFound(err) {
				c, err = nil, nil
			}
			out[0] = &dataloader.Result[*payments.Customer]{Data: c, Error: err}
			return out
		}
		all, err := l.customers.do(func() ([]payments.Customer, error) { return p.Customers.List(ctx) })
		byID := make(map[string]*payments.Customer, len(all))
		for i := range all {
			byID[all[i].ID] = &all[i]
		}
		for i, id := range ids {
			out[i] = &dataloader.Result[*payments.Customer]{Data: byID[id], Error: err}
		}
		return out
	}
}

func ordersBatch(p *payments.Client, l *listings) dataloader.BatchFunc[OrdersKey, []payments.Order] {
	return func(ctx context.Context, keys []OrdersKey) []*dataloader.Result[[]payments.Order] {
		type window struct{ start, end string }
		type listing struct {
			byCustomer map[string][]payments.Order
			err        error
		}
		// One listing per distinct window, fanOut at a time: the upstream
		// lists orders by date, so customers sharing a window share it.
		byWindow := map[window]*listing{}
		var windows []window
		for _, k := range keys {
			w := window{k.Start, k.End}
			if byWindow[w] == nil {
				byWindow[w] = &listing{}
				windows = append(windows, w)
			}
		}
		each(len(windows), func(i int) {
			w := windows[i]
			got := byWindow[w]
			start, err1 := time.Parse(payments.DateLayout, w.start)
			end, err2 := time.Parse(payments.DateLayout, w.end)
			if err1 != nil || err2 != nil {
				got.err = errBadWindow
				return
			}
			orders, err := l.ordersFor(w.start, w.end).do(func() ([]payments.Order, error) { return p.Orders.List(ctx, start, end) })
			got.err = err
			got.byCustomer = byCustomer(orders)
		})
		out := make([]*dataloader.Result[[]payments.Order], len(keys))
		for i, k := range keys {
			got := byWindow[window{k.Start, k.End}]
			out[i] = &dataloader.Result[[]payments.Order]{Data: got.byCustomer[k.CustomerID], Error: got.err}
		}
		return out
	}
}

// byCustomer groups a listing's orders by customer, in listing order, in
// one block: appending them customer by customer grew a slice per customer
// (an order is ~300 bytes), ~6% of a README query's bytes.
func byCustomer(orders []payments.Order) map[string][]payments.Order {
	counts := map[string]int{}
	n := 0
	for i := range orders {
		if id := orders[i].Customer.ID; id != "" {
			counts[id]++
			n++
		}
	}
	block := make([]payments.Order, 0, n)
	out := make(map[string][]payments.Order, len(counts))
	for id, c := range counts {
		out[id] = block[len(block) : len(block) : len(block)+c]
		block = block[:len(block)+c]
	}
	for i := range orders {
		if id := orders[i].Customer.ID; id != "" {
			out[id] = append(out[id], orders[i])
		}
	}
	return out
}

type loaderError string

func (e loaderError) Error() string { return string(e) }

const errBadWindow = loaderError("loaders: order window dates must be YYYY-MM-DD")

// OrdersIn reads the merchant's orders created in [start, end]
// (YYYY-MM-DD) once per request: the same memoised listing the Orders
// loader filters, so order(id), node and Customer.orders over one window
// share one upstream call.
func (ls *Loaders) OrdersIn(ctx context.Context, start, end time.Time) ([]payments.Order, error) {
	s, e := start.UTC().Format(payments.DateLayout), end.UTC().Format(payments.DateLayout)
	return ls.listings.ordersFor(s, e).do(func() ([]payments.Order, error) { return ls.payments.Orders.List(ctx, start, end) })
}

// StartOrders begins reading the listing OrdersIn reads for [start, end]
// on a worker, now, for a resolver that knows the window before the fields
// that read it ask (resolvers.startCustomersOrders).
func (ls *Loaders) StartOrders(ctx context.Context, start, end time.Time) {
	ls.workers.Go(func() { _, _ = ls.OrdersIn(ctx, start, end) })
}

// OrdersOf answers the orders of several customers at once (see batchNow):
// Customer.orders, a batch resolver, asks for all the customers of a list in
// one call. errs[i] is keys[i]'s error.
func (ls *Loaders) OrdersOf(ctx context.Context, keys []OrdersKey) (lists [][]payments.Order, errs []error) {
	return batchNow(ctx, ls.workers, &ls.Orders, keys)
}
