// Package loaders holds the per-request dataloaders (graph-gophers/dataloader
// v7) through which resolvers reach the upstreams, so that a query touching
// N customers costs a fixed number of upstream calls rather than N. Loaders
// live for one request and are never shared across sessions: their caches
// hold one caller's view of the data.
package loaders

import (
	"context"
	"net/http"
	"time"

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
	Customer *dataloader.Loader[string, *payments.Customer]
	// Orders loads customers' orders: one listing per distinct date range,
	// shared by every customer asked for in that range.
	Orders *dataloader.Loader[OrdersKey, []payments.Order]

	// Banking holds the loaders of the banking upstream (banking.go).
	Banking
}

// New returns fresh loaders over the payments and banking clients.
func New(p *payments.Client, b *banking.Client) *Loaders {
	return &Loaders{
		Customer: dataloader.NewBatchedLoader(customerBatch(p), dataloader.WithWait[string, *payments.Customer](Wait)),
		Orders:   dataloader.NewBatchedLoader(ordersBatch(p), dataloader.WithWait[OrdersKey, []payments.Order](Wait)),
		Banking:  newBanking(b),
	}
}

type ctxKey struct{}

// Middleware gives every request its own loaders.
func Middleware(p *payments.Client, b *banking.Client, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(With(r.Context(), New(p, b))))
	})
}

// With returns ctx carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the loaders of the request ctx belongs to.
func For(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	if l == nil {
		panic("loaders: no loaders in context; is loaders.Middleware installed?")
	}
	return l
}

func customerBatch(p *payments.Client) dataloader.BatchFunc[string, *payments.Customer] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*payments.Customer] {
		out := make([]*dataloader.Result[*payments.Customer], len(ids))
		if len(ids) == 1 {
			c, err := p.Customers.Get(ctx, ids[0])
			if pe, ok := payments.AsError(err); ok && pe.StatusCode == http.StatusNotFound {
				c, err = nil, nil
			}
			out[0] = &dataloader.Result[*payments.Customer]{Data: c, Error: err}
			return out
		}
		all, err := p.Customers.List(ctx)
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

func ordersBatch(p *payments.Client) dataloader.BatchFunc[OrdersKey, []payments.Order] {
	return func(ctx context.Context, keys []OrdersKey) []*dataloader.Result[[]payments.Order] {
		type window struct{ start, end string }
		type listing struct {
			byCustomer map[string][]payments.Order
			err        error
		}
		listings := map[window]*listing{}
		for _, k := range keys {
			w := window{k.Start, k.End}
			if listings[w] != nil {
				continue
			}
			l := &listing{}
			listings[w] = l
			start, err1 := time.Parse(payments.DateLayout, k.Start)
			end, err2 := time.Parse(payments.DateLayout, k.End)
			if err1 != nil || err2 != nil {
				l.err = errBadWindow
				continue
			}
			orders, err := p.Orders.List(ctx, start, end)
			l.err = err
			l.byCustomer = map[string][]payments.Order{}
			for _, o := range orders {
				if o.Customer.ID != "" {
					l.byCustomer[o.Customer.ID] = append(l.byCustomer[o.Customer.ID], o)
				}
			}
		}
		out := make([]*dataloader.Result[[]payments.Order], len(keys))
		for i, k := range keys {
			l := listings[window{k.Start, k.End}]
			out[i] = &dataloader.Result[[]payments.Order]{Data: l.byCustomer[k.CustomerID], Error: l.err}
		}
		return out
	}
}

type loaderError string

func (e loaderError) Error() string { return string(e) }

const errBadWindow = loaderError("loaders: order window dates must be YYYY-MM-DD")
