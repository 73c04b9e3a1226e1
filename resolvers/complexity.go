package resolvers

import (
	"math"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
)

// Complexity makes the complexity limit count list sizes where a client
// chooses them: a connection costs its page size times what each edge
// asks for, so `persons(first: 100) { edges { node { ... } } }` costs a
// hundred times `persons(first: 1)`. What a connection answers once per
// page (pageInfo, totalCount) costs once. Lists the upstream returns whole
// are counted once per field, as gqlgen does by default: their size is the
// data's, not the client's choice, and the fields limit bounds their shape.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Persons = func(child int, first *int64, _ *string, _ *model.PersonSortField, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.PersonConnection.Edges = perItem
	c.Query.Corporations = func(child int, first *int64, _ *string, _ *model.CorporationSortField, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.CorporationConnection.Edges = perItem
	c.Card.Transactions = func(child int, first *int64, _ *string, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.CardTransactionConnection.Edges = perItem
	c.Wallet.Transactions = func(child int, first *int64, _ *string, _ *model.SortDirection) int {
		return paged(child, first, defaultFirst)
	}
	c.WalletTransactionConnection.Edges = perItem
	// A page of events also reads, before its events, the newest event of
	// each subject of the caller's scope: that fixed cost counts per
	// page, so aliased pages of one event cost what they read.
	c.Query.EventHistory = func(child int, first *int64, _ *string, names []string) int {
		p := paged(child, first, defaultFirst)
		if p == math.MaxInt {
			return p
		}
		return p + events.HistoryFixedReads(len(names))
	}
	c.EventConnection.Edges = perItem
	// nodes(ids:) reads as many objects as the client names.
	c.Query.Nodes = func(child int, ids []string) int { return 1 + len(ids)*child }
	return c
}

// itemScale separates, in a connection's child complexity, what is asked
// once per item from what is asked once per page. gqlgen hands a field only
// the sum of its selection's costs, so a connection's edges report their
// cost multiplied by itemScale (perItem), and the connection field (paged)
// reads the quotient as the cost of one item and the remainder as the cost
// of the page's other fields. A remainder can only reach itemScale with
// billions of fields, far beyond the fields limit.
const itemScale = 1 << 32

// perItem is the complexity of a connection's edges field: 1 for the field
// and its selection, per item, scaled for paged.
func perItem(child int) int {
	if child >= math.MaxInt/itemScale-1 {
		return math.MaxInt
	}
	return (1 + child) * itemScale
}

// paged is 1 for the field, plus its page size (def when not given) times
// what one item asks for, plus what the page asks for once. A page size
// out of range is the validator's to refuse; here it is clamped so the
// product cannot overflow.
func paged(child int, first *int64, def int64) int {
	n := def
	if first != nil {
		n = min(max(*first, 1), 1000)
	}
	if child == math.MaxInt {
		// Saturated below (perItem, or gqlgen's own sums): stays so.
		return math.MaxInt
	}
	item, page := child/itemScale, child%itemScale
	if item > (math.MaxInt-1-page)/int(n) {
		return math.MaxInt
	}
	return 1 + int(n)*item + page
}
