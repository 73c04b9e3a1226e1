package gqlhttp

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

var errInternal = &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error"}

// ShapeLimit refuses operations that nest too deep, alias too much or ask for
// too many root fields, before anything is resolved. gqlgen offers a
// complexity limit but none of these.
type ShapeLimit struct {
	MaxDepth      int
	MaxAliases    int
	MaxRootFields int
}

var (
	_ graphql.HandlerExtension        = ShapeLimit{}
	_ graphql.OperationContextMutator = ShapeLimit{}
)

// ExtensionName implements graphql.HandlerExtension.
func (ShapeLimit) ExtensionName() string { return "ShapeLimit" }

// Validate implements graphql.HandlerExtension.
func (s ShapeLimit) Validate(graphql.ExecutableSchema) error {
	if s.MaxDepth <= 0 || s.MaxAliases < 0 || s.MaxRootFields <= 0 {
		return errors.New("ShapeLimit: limits must be positive")
	}
	return nil
}

// MutateOperationContext implements graphql.OperationContextMutator.
func (s ShapeLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	w := shapeWalker{doc: oc.Doc, seen: map[string]bool{}}
	roots := w.walk(oc.Operation.SelectionSet, 1)
	var msg string
	switch {
	case roots > s.MaxRootFields:
		msg = fmt.Sprintf("operation has %d root fields; the limit is %d", roots, s.MaxRootFields)
	case w.depth > s.MaxDepth:
		msg = fmt.Sprintf("operation nests %d levels deep; the limit is %d", w.depth, s.MaxDepth)
	case w.aliases > s.MaxAliases:
		msg = fmt.Sprintf("operation uses %d aliases; the limit is %d", w.aliases, s.MaxAliases)
	default:
		return nil
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(gqlerr.BadUserInput), "reason": "QUERY_TOO_LARGE"}}
}

type shapeWalker struct {
	doc     *ast.QueryDocument
	seen    map[string]bool
	depth   int
	aliases int
}

// walk returns the number of fields directly in set (through fragments).
func (w *shapeWalker) walk(set ast.SelectionSet, depth int) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n++
			if depth > w.depth {
				w.depth = depth
			}
			if s.Alias != "" && s.Alias != s.Name {
				w.aliases++
			}
			w.walk(s.SelectionSet, depth+1)
		case *ast.InlineFragment:
			n += w.walk(s.SelectionSet, depth)
		case *ast.FragmentSpread:
			if w.seen[s.Name] || w.doc == nil {
				continue
			}
			if f := w.doc.Fragments.ForName(s.Name); f != nil {
				w.seen[s.Name] = true
				n += w.walk(f.SelectionSet, depth)
				delete(w.seen, s.Name)
			}
		}
	}
	return n
}
