package graph

import (
	"context"
	"io"
	"sync"

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
	// The field context and the index it points to in one allocation.
	el := &struct {
		fc    graphql.FieldContext
		index int
	}{index: i}
	el.fc.Index = &el.index
	ctx = graphql.WithFieldContext(ctx, &el.fc)
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

// writeFields is what internal/gqlinline makes each object marshaller of
// generated.go return in place of its *graphql.FieldSet. The object is
// written as gqlgen's FieldSet.MarshalGQL writes it: every field in order,
// an alias written twice only the first time. gqlgen's makes a map of the
// aliases written and a heap copy of every field for each object; this
// scans the aliases before it, or keeps a map past a few dozen fields, so
// that a selection of many aliases costs no more than gqlgen's (a GraphQL
// name needs no escaping).
func writeFields(out *graphql.FieldSet, fields []graphql.CollectedField) graphql.Marshaler {
	return &fieldsWriter{values: out.Values, fields: fields}
}

// scanAliases is the most fields an object's aliases are scanned for
// repeats; past it, a map.
const scanAliases = 32

type fieldsWriter struct {
	values []graphql.Marshaler
	fields []graphql.CollectedField
}

func (w *fieldsWriter) MarshalGQL(wr io.Writer) {
	_, _ = io.WriteString(wr, "{")
	var written map[string]bool
	if len(w.fields) > scanAliases {
		written = make(map[string]bool, len(w.fields))
	}
	first := true
	for i := range w.fields {
		alias := w.fields[i].Alias
		if written != nil {
			if written[alias] {
				continue
			}
			written[alias] = true
		} else if writtenBefore(w.fields[:i], alias) {
			continue
		}
		if first {
			first = false
			_, _ = io.WriteString(wr, `"`)
		} else {
			_, _ = io.WriteString(wr, `,"`)
		}
		_, _ = io.WriteString(wr, alias)
		_, _ = io.WriteString(wr, `":`)
		w.values[i].MarshalGQL(wr)
	}
	_, _ = io.WriteString(wr, "}")
}

func writtenBefore(before []graphql.CollectedField, alias string) bool {
	for i := range before {
		if before[i].Alias == alias {
			return true
		}
	}
	return false
}

// nonNullContextMarshaler is what internal/gqlinline puts in place of
// graphql.WrapContextMarshaler in the non-null marshallers of context
// scalars (MinorUnits, Int): a null stays graphql.Null, so that the object
// holding the field counts it and is nulled in turn, as GraphQL's non-null
// rule requires; gqlgen's wrapper hides it.
func nonNullContextMarshaler(ctx context.Context, m graphql.ContextMarshaler) graphql.Marshaler {
	if m == graphql.Null {
		return graphql.Null
	}
	return graphql.WrapContextMarshaler(ctx, m)
}

type argsCacheKey struct{}

// argsCache is an operation's arguments per field of its document.
type argsCache struct {
	mu sync.Mutex
	m  map[*ast.Field]map[string]any
}

// withArgsCache is what internal/gqlinline adds to each operation's
// context in Exec: the cache cachedArgs keeps.
func withArgsCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, argsCacheKey{}, &argsCache{})
}

// cachedArgs is what internal/gqlinline puts in place of a field context
// function's arguments call: the arguments the field's place in the
// document resolved to the first time in this operation, or compute's
// answer now. They depend on that place and the operation's variables
// only; resolvers read them, never change them. An error is not kept, so
// that every place of a field whose arguments fail reports it.
func cachedArgs(ctx context.Context, ec *executionContext, field graphql.CollectedField,
	compute func(*executionContext, context.Context, map[string]any) (map[string]any, error)) (map[string]any, error) {
	c, _ := ctx.Value(argsCacheKey{}).(*argsCache)
	if c == nil || field.Field == nil {
		return compute(ec, ctx, field.ArgumentMap(ec.Variables))
	}
	c.mu.Lock()
	args, ok := c.m[field.Field]
	c.mu.Unlock()
	if ok {
		return args, nil
	}
	args, err := compute(ec, ctx, field.ArgumentMap(ec.Variables))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[*ast.Field]map[string]any)
	}
	c.m[field.Field] = args
	c.mu.Unlock()
	return args, nil
}
