package resolvers

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
)

// nodes reads up to MaxNodes objects by global id. They load concurrently,
// so the loaders see every key in one batch window: ten cards cost one card
// listing, ten persons one person listing. An id that names nothing the
// caller may see is null, with its error at nodes.<i>; it does not fail the
// others.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]model.Node, error) {
	if len(ids) > MaxNodes {
		return nil, gqlerr.BadInput("ids", "at most %d ids at once, got %d", MaxNodes, len(ids))
	}
	r.primeCustomers(ctx, ids)
	out := make([]model.Node, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { out[i], errs[i] = r.node(ctx, id) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			idx := i
			graphql.AddError(graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &idx}), err)
			out[i] = nil
		}
	}
	return out, nil
}

// primeCustomers reads the merchant's customer listing up front when ids
// name several customers: that one listing is what they cost, and the
// Customer loader, which reads a lone key by id, would otherwise pay an
// extra read whenever a slow start splits the keys across two batch
// windows. A failed listing is left to each customer's own load to report.
func (r *Resolver) primeCustomers(ctx context.Context, ids []string) {
	if s := session.From(ctx); s == nil || s.Kind == session.Customer {
		return // a customer sees only itself, never the listing
	}
	n := 0
	for _, id := range ids {
		if ref, err := relay.Decode(id); err == nil && ref.Kind == relay.Customer {
			n++
		}
	}
	if n < 2 || (r.Policy != nil && r.Policy.Allows(ctx, nodeRoles[relay.Customer]) != nil) {
		return
	}
	_, _ = primeCustomers(ctx)
}
