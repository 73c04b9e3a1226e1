package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// selects reports whether the current field's selection reaches path, for
// example items.persons.
func selects(ctx context.Context, path ...string) bool {
	if graphql.GetFieldContext(ctx) == nil {
		return false
	}
	op := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFieldsCtx(ctx, nil)
	for i, name := range path {
		var next []graphql.CollectedField
		found := false
		for _, f := range fields {
			if f.Name == name {
				found = true
				if i < len(path)-1 {
					next = append(next, graphql.CollectFields(op, f.Selections, nil)...)
				}
			}
		}
		if !found {
			return false
		}
		fields = next
	}
	return true
}
