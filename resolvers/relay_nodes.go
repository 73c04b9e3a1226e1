package resolvers

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
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
