package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// inlineType is, for one object type, the fields that may wait on I/O: a
// nil value is a field that may wait itself (a resolver or a directive), a
// type is a field whose value has such fields. inline_gen.go holds one per
// type that has any.
type inlineType struct {
	implementors []string
	fields       map[string]*inlineType
}

// waits tells whether the selection sel on a value of type t selects a
// field that may wait on I/O, at any depth.
func (t *inlineType) waits(op *graphql.OperationContext, sel ast.SelectionSet) bool {
	if t == nil {
		return false
	}
	for _, f := range graphql.CollectFields(op, sel, t.implementors) {
		child, ok := t.fields[f.Name]
		if ok && (child == nil || child.waits(op, f.Selections)) {
			return true
		}
	}
	return false
}

// marshalSliceInline is what internal/gqlinline puts in place of gqlgen's
// graphql.MarshalSliceConcurrently in the list marshallers of generated.go.
// When the elements' selection waits on nothing (t is the element type's
// table, nil when no field of it may wait), it marshals them one after the
// other on the calling goroutine, each with the field context and the panic
// recovery gqlgen gives it; otherwise it hands the list to gqlgen, whose
// goroutine per element lets the elements' loads meet in one loader window.
func marshalSliceInline(ctx context.Context, op *graphql.OperationContext, sel ast.SelectionSet, t *inlineType,
	length int, marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	if t.waits(op, sel) {
		return graphql.MarshalSliceConcurrently(ctx, length, 0, false, marshalElement)
	}
	ret := make(graphql.Array, length)
	for i := range length {
		ret[i] = marshalOne(ctx, i, marshalElement)
	}
	return ret
}

func marshalOne(ctx context.Context, i int, marshalElement func(ctx context.Context, i int) graphql.Marshaler) (m graphql.Marshaler) {
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			m = graphql.Null
		}
	}()
	return marshalElement(ctx, i)
}

// newDeferredGroup is what internal/gqlinline puts in place of gqlgen's
// graphql.NewDeferredGroup in the object marshallers of generated.go: the
// group only @defer'd fields use, built only when one of the object's
// fields is deferred. Without one the empty group is what gqlgen's would
// be at the end: no deferred payloads.
func newDeferredGroup(ctx context.Context, fields []graphql.CollectedField) graphql.DeferredGroup {
	for i := range fields {
		if fields[i].IsDeferred() {
			return graphql.NewDeferredGroup(ctx)
		}
	}
	return graphql.DeferredGroup{}
}
