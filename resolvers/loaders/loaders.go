// Package loaders is how resolvers read the upstreams: a resolver reads
// from an upstream by asking its operation's read cache for a key (Get where
// the answer is used, Start beforehand when the selection shows the field
// below will need it), and each key is read at most once per operation.
//
// Every kind of read is a Read (read.go); a Read whose keys all share one
// upstream listing (a corporation's persons, a cardholder on the first page
// of persons) looks its key up in that listing's Read. Only customers by id
// are batched (dataloader v7, Loader): one key is a read by id, several keys
// are the one customer listing, the spec having no read by ids. The cache
// lives for one GraphQL operation (one subscription event) and is never
// shared across operations or sessions: it holds one caller's view of the
// data at one moment.
package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Wait is how long the Customer loader gathers keys before it calls the
// upstream. The library's 16 ms default is far longer than resolvers need
// to enqueue a list's worth of keys.
const Wait = time.Millisecond

// Window is the key of an order listing: the orders created in
// [Start, End], as YYYY-MM-DD.
type Window struct{ Start, End string }

// WindowOf is the listing key of the orders created in [start, end].
func WindowOf(start, end time.Time) Window {
	return Window{start.UTC().Format(payments.DateLayout), end.UTC().Format(payments.DateLayout)}
}

// Loaders is the read cache of one operation.
type Loaders struct {
	// Customer reads customers by id: one GET by id for a single key, the
	// customer listing for several.
	Customer Loader[string, *payments.Customer]
	// Customers reads the merchant's customer listing.
	Customers Read[Whole, []payments.Customer]
	// Orders reads the merchant's orders of a window: one listing per
	// window, shared by every customer's orders in it, order(id) and node.
	Orders Read[Window, *OrderListing]
	// PendingActionByEvent reads the pending action tied to an event: one
	// GET /v3/pending_actions?event_id= per event, the spec's preferred way
	// (rule 4); nil for an event without one.
	PendingActionByEvent Read[string, *payments.PendingAction]

	// Banking holds the reads of the banking upstream (banking.go).
	Banking
	// CardLoaders holds the reads of cards and KYC documents (cards.go).
	CardLoaders
	// Money holds the reads of wallets and money movement (wallets.go).
	Money
}

// Option tunes New.
type Option func(*options)

type options struct {
	wait    time.Duration
	workers *Workers
}

// WithWait sets how long the Customer loader gathers keys before a batch
// (Wait by default). Tests that assert how a batch is served lengthen it,
// so that a slow machine does not split their batch.
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// New returns a fresh read cache over the payments and banking upstreams.
func New(p PaymentsSource, b BankingSource, opts ...Option) *Loaders {
	o := options{wait: Wait}
	for _, f := range opts {
		f(&o)
	}
	ls := &Loaders{}
	ls.Customers.init(func(ctx context.Context, _ Whole) ([]payments.Customer, error) { return p.Customers.List(ctx) }, o.workers)
	ls.Customer.init(customerBatch(p, &ls.Customers), o.wait)
	ls.Orders.init(func(ctx context.Context, w Window) (*OrderListing, error) { return listOrders(ctx, p, w) }, o.workers)
	ls.PendingActionByEvent.init(func(ctx context.Context, id string) (*payments.PendingAction, error) {
		pa, err := p.PendingActions.ByEvent(ctx, id)
		if payments.IsNotFound(err) {
			return nil, nil
		}
		return pa, err
	}, o.workers)
	ls.Banking.init(b, o.workers)
	ls.CardLoaders.init(b, o.workers, &ls.Banking)
	ls.Money.init(b, o.workers)
	return ls
}

type ctxKey struct{}

// PerOperation is the gqlgen handler extension that gives every GraphQL
// operation its own read cache, and every event of a subscription its own.
// The cache cannot live on the HTTP request: all operations of a websocket
// share its upgrade request's context, so they would share one cache for
// the socket's lifetime and a second run of a query would read the first
// run's (stale) data. The cache is made when a resolver first asks for it:
// mutations, subscriptions and most small queries never do, and an idle
// websocket subscription would otherwise hold one. Install it with the
// GraphQL server's Use.
type PerOperation struct {
	Payments PaymentsSource
	Banking  BankingSource
	// Options are passed to New for every operation's read cache.
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

// InterceptOperation gives the operation a read cache of its own: a
// subscription's root resolver runs here, before any response.
func (e PerOperation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(e.fresh(ctx))
}

// InterceptResponse gives each response a fresh read cache: a query or
// mutation has one response, so this is its operation's; a subscription has
// one per event, and an event's fields must read the data as it is at that
// event, not as the first event's cache held it.
func (e PerOperation) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	return next(e.fresh(ctx))
}

// A query's reads, and each subscription event's, may share an upstream
// call of another operation that is not sent yet or was sent after they
// began (roundtrip.ShareFrom): the answer then holds everything written
// before they started. A mutation's
// reads never share: one that checks what its own write did (was the order
// made?) must see that write, which a call begun before it could miss.
func (e PerOperation) fresh(ctx context.Context) context.Context {
	if readOnly(ctx) {
		ctx = roundtrip.ShareFrom(ctx, time.Now())
	}
	return context.WithValue(ctx, ctxKey{}, &lazy{p: e.Payments, b: e.Banking, opts: e.Options})
}

// readOnly reports whether ctx runs a query or a subscription.
func readOnly(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation != ast.Mutation
}

// lazy makes an operation's read cache on first use.
type lazy struct {
	once sync.Once
	l    *Loaders
	p    PaymentsSource
	b    BankingSource
	opts []Option
}

func (z *lazy) get() *Loaders {
	z.once.Do(func() { z.l = New(z.p, z.b, z.opts...) })
	return z.l
}

// For returns the read cache of the operation ctx belongs to.
func For(ctx context.Context) *Loaders {
	if l, ok := ctx.Value(ctxKey{}).(*lazy); ok {
		return l.get()
	}
	panic("loaders: no loaders in context; is loaders.PerOperation installed?")
}

// customerBatch answers customers by id: in a customer session only its
// own (from `me`, never a merchant listing); a lone key by a read by id;
// several keys from the customer listing.
func customerBatch(p PaymentsSource, listing *Read[Whole, []payments.Customer]) dataloader.BatchFunc[string, *payments.Customer] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*payments.Customer] {
		out := make([]*dataloader.Result[*payments.Customer], len(ids))
		if _, ok := payments.CustomerKey(ctx); ok {
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
		all, err := listing.Get(ctx, Whole{})
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

// OrderListing is the merchant's orders of one window, in listing order,
// and grouped by customer.
type OrderListing struct {
	All        []payments.Order
	byCustomer map[string][]payments.Order
}

// Of is the listing's orders of one customer.
func (o *OrderListing) Of(customerID string) []payments.Order {
	if o == nil {
		return nil
	}
	return o.byCustomer[customerID]
}

func listOrders(ctx context.Context, p PaymentsSource, w Window) (*OrderListing, error) {
	start, err1 := time.Parse(payments.DateLayout, w.Start)
	end, err2 := time.Parse(payments.DateLayout, w.End)
	if err1 != nil || err2 != nil {
		return nil, errBadWindow
	}
	all, err := p.Orders.List(ctx, start, end)
	if err != nil {
		return nil, err
	}
	return &OrderListing{All: all, byCustomer: byCustomer(all)}, nil
}

// byCustomer groups a listing's orders by customer, in listing order, in
// one block: appending them customer by customer would grow a slice per
// customer, and orders are large.
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
