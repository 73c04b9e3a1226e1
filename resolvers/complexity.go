package resolvers

import (
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
)

// Complexity makes the complexity limit count list sizes where a client
// chooses them: a connection costs its page size times what each edge
// asks for, so `persons(first: 100) { edges { node { ... } } }` costs a
// hundred times `persons(first: 1)`. Lists the upstream returns whole are counted
// once per field, as gqlgen does by default: their size is the data's, not
// the client's choice, and the fields limit bounds their shape.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Persons = func(child int, first *int64, _ *string, _ *model.PersonSortField, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.Query.Corporations = func(child int, first *int64, _ *string, _ *model.CorporationSortField, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.Card.Transactions = func(child int, first *int64, _ *string, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.Query.EventHistory = func(child int, first *int64, _ *string, _ []string) int {
		return paged(child, first, defaultFirst)
	}
	// nodes(ids:) reads as many objects as the client names.
	c.Query.Nodes = func(child int, ids []string) int { return 1 + len(ids)*child }
	return c
}

// paged is 1 for the field plus its page size (def when not given) times
// the complexity of one page's selection. A page size out of range is the
// validator's to refuse; here it is clamped so the product cannot overflow.
func paged(child int, first *int64, def int64) int {
	n := def
	if first != nil {
		n = min(max(*first, 1), 1000)
	}
	return 1 + int(n)*child
}
