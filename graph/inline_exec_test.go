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

type query struct {
	graph.QueryResolver
	order *model.Order
}

// Order answers the order the test gave.
func (q query) Order(context.Context, string) (*model.Order, error) { return q.order, nil }

func serve(t *testing.T, order *model.Order, q string) (data json.RawMessage, errs []struct {
	Message string
	Path    []any
}) {
	t.Helper()
	cfg := graph.Config{Resolvers: root{order: order}}
	cfg.Directives.Requires = func(ctx context.Context, _ any, next graphql.Resolver, _ model.Role) (any, error) { return next(ctx) }
	srv := handler.New(graph.NewExecutableSchema(cfg))
	srv.AddTransport(transport.POST{})
	body, _ := json.Marshal(map[string]string{"query": q})
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

// The object fields internal/gqlinline rewrites (Order.amount, a Money)
// keep what graphql.ResolveField gave them: a child's error carries the
// child's whole path, a non-null child's null nulls the parents up to the
// nearest nullable field, and the sibling objects answer.
func TestRewrittenObjectFieldKeepsPathsAndNulls(t *testing.T) {
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

	o.Amount = nil
	data, errs = serve(t, o, `{ order(id: "x") { amount { amount } } }`)
	if string(data) != `{"order":null}` || len(errs) != 1 || fmt.Sprint(errs[0].Path) != "[order amount]" {
		t.Errorf("a nil non-null object: data %s, errors %+v, want one error at [order amount]", data, errs)
	}
}
