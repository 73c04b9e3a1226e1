package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
)

// root answers the one field these tests ask (Query.order) and nothing
// else: every other resolver is the nil interface it embeds.
type root struct {
	graph.ResolverRoot
	order *model.Order
}

func (r root) Query() graph.QueryResolver { return query{order: r.order} }

func (r root) Customer() graph.CustomerResolver { return customer{} }

type query struct {
	graph.QueryResolver
	order *model.Order
}

// Customers answers three customers.
func (q query) Customers(context.Context) ([]*model.Customer, error) {
	return []*model.Customer{{GlobalID: "c1", ID: "1"}, {GlobalID: "c2", ID: "2"}, {GlobalID: "c3", ID: "3"}}, nil
}

// customer answers each customer's orders with one order whose id is the
// start date it was asked for.
type customer struct{ graph.CustomerResolver }

func (customer) Orders(_ context.Context, objs []*model.Customer, start, _ *model.Date) ([][]*model.Order, error) {
	out := make([][]*model.Order, len(objs))
	for i := range objs {
		out[i] = []*model.Order{{ID: start.Format(model.DateLayout)}}
	}
	return out, nil
}

// Order answers the order the test gave.
func (q query) Order(context.Context, string) (*model.Order, error) { return q.order, nil }

func serve(t *testing.T, order *model.Order, q string) (data json.RawMessage, errs []struct {
	Message string
	Path    []any
}) {
	t.Helper()
	return serveVars(t, order, q, nil)
}

func serveVars(t *testing.T, order *model.Order, q string, vars map[string]any) (data json.RawMessage, errs []struct {
	Message string
	Path    []any
}) {
	t.Helper()
	cfg := graph.Config{Resolvers: root{order: order}}
	cfg.Directives.Requires = func(ctx context.Context, _ any, next graphql.Resolver, _ model.Role) (any, error) { return next(ctx) }
	srv := handler.New(graph.NewExecutableSchema(cfg))
	srv.AddTransport(transport.POST{})
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	var out struct {
		Data   json.RawMessage
		Errors []struct {
			Message string
			Path    []any
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, rec.Body.String())
	}
	return out.Data, out.Errors
}

// A non-null MinorUnits out of its range is a null that nulls its parents
// up to the nearest nullable field, with one error at the scalar's path
// (internal/gqlinline's nulls: gqlgen's wrapper hid that null from the
// parent); the values in range, which the guarded leaves answer without
// ResolveField, answer as they are, aliases included.
func TestOutOfRangeScalarNullsItsNonNullParents(t *testing.T) {
	o := &model.Order{ID: "o1", Status: model.OrderStatusCaptured,
		Amount:         &model.Money{Amount: 1 << 60, Currency: "EUR"},
		CapturedAmount: &model.Money{Amount: 5, Currency: "EUR"},
		RefundedAmount: &model.Money{Amount: 0, Currency: "EUR"}}
	data, errs := serve(t, o, `{ order(id: "x") { capturedAmount { amount } amount { currency amount } } }`)
	if string(data) != `{"order":null}` {
		t.Errorf("data %s, want the order nulled by its non-null amount", data)
	}
	if len(errs) != 1 || fmt.Sprint(errs[0].Path) != "[order amount amount]" {
		t.Fatalf("errors %+v, want one at [order amount amount]", errs)
	}

	o.Amount.Amount = 12
	data, errs = serve(t, o, `{ order(id: "x") { a: capturedAmount { amount } amount { currency amount } } }`)
	if string(data) != `{"order":{"a":{"amount":5},"amount":{"currency":"EUR","amount":12}}}` || len(errs) != 0 {
		t.Errorf("data %s, errors %+v", data, errs)
	}
}

// A field's arguments are worked out once per place in the operation
// (internal/gqlinline's cachedArgs): every customer's orders get the
// arguments of their own place, aliases with other arguments and a
// variable get theirs, and arguments that fail fail at every customer.
func TestArgumentsArePerPlaceInTheOperation(t *testing.T) {
	data, errs := serveVars(t, nil, `query($s: Date) { customers { a: orders(start: "2026-01-02") { upstreamId }
		b: orders(start: $s) { upstreamId } } }`, map[string]any{"s": "2026-03-04"})
	want := `{"a":[{"upstreamId":"2026-01-02"}],"b":[{"upstreamId":"2026-03-04"}]}`
	if string(data) != `{"customers":[`+want+","+want+","+want+`]}` || len(errs) != 0 {
		t.Errorf("data %s, errors %+v", data, errs)
	}

	data, errs = serve(t, nil, `{ customers { orders(start: "not a date") { upstreamId } } }`)
	if string(data) != `{"customers":[{"orders":null},{"orders":null},{"orders":null}]}` || len(errs) != 3 {
		t.Fatalf("data %s, errors %+v; want three customers without orders and three errors", data, errs)
	}
	at := map[string]bool{}
	for _, e := range errs {
		at[fmt.Sprint(e.Path)] = true
	}
	for i := range 3 {
		if p := fmt.Sprintf("[customers %d orders start]", i); !at[p] {
			t.Errorf("no error at %s: %v", p, at)
		}
	}
}
