package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

// argCtx is the context gqlgen reads input.items.list[1].amount in.
func argCtx() context.Context {
	ctx := context.Background()
	for _, p := range []*graphql.PathContext{graphql.NewPathWithField("input"), graphql.NewPathWithField("items"),
		graphql.NewPathWithField("list"), graphql.NewPathWithIndex(1), graphql.NewPathWithField("amount")} {
		ctx = graphql.WithPathContext(ctx, p)
	}
	return ctx
}

func TestMinorUnitsReadsWholeJSONNumbersInRange(t *testing.T) {
	for _, v := range []any{int64(1250), json.Number("1250"), json.Number("-9007199254740991"), int64(model.MaxMinorUnits), 7} {
		_, err := model.UnmarshalMinorUnits(argCtx(), v)
		assert.NoError(t, err, "%v", v)
	}
	for _, v := range []any{"1250", json.Number("12.5"), json.Number("1e3"), 12.5, int64(model.MaxMinorUnits + 1),
		json.Number("9007199254740992"), json.Number("99999999999999999999"), true, map[string]any{}} {
		_, err := model.UnmarshalMinorUnits(argCtx(), v)
		e, ok := gqlerr.As(err)
		require.True(t, ok, "%v: want a client error, got %v", v, err)
		assert.Equal(t, gqlerr.BadUserInput, e.Code, "%v", v)
		assert.Equal(t, "input.items.list[1].amount", e.Field, "%v", v)
	}
}

func TestIntIsThirtyTwoBits(t *testing.T) {
	for _, v := range []any{int64(math.MaxInt32), int64(math.MinInt32), json.Number("20")} {
		_, err := model.UnmarshalInt(argCtx(), v)
		assert.NoError(t, err, "%v", v)
	}
	for _, v := range []any{"20", int64(math.MaxInt32) + 1, int64(math.MinInt32) - 1, json.Number("2.0")} {
		_, err := model.UnmarshalInt(argCtx(), v)
		e, ok := gqlerr.As(err)
		require.True(t, ok, "%v: want a client error, got %v", v, err)
		assert.Equal(t, gqlerr.BadUserInput, e.Code, "%v", v)
	}
}

// Out of range on output is null (gqlgen then reports a non-null field and
// nulls its parent), never a number a client would read wrong.
func TestOutputsOutOfRangeAreNull(t *testing.T) {
	assert.Equal(t, graphql.Null, model.MarshalMinorUnits(model.MaxMinorUnits+1))
	assert.Equal(t, graphql.Null, model.MarshalMinorUnits(math.MinInt64))
	assert.Equal(t, graphql.Null, model.MarshalInt(math.MaxInt32+1))
	var b bytes.Buffer
	require.NoError(t, model.MarshalMinorUnits(-model.MaxMinorUnits).MarshalGQLContext(context.Background(), &b))
	assert.Equal(t, "-9007199254740991", b.String())
}

// usedContext fails a test whose code reads the context it was given.
type usedContext struct{ context.Context }

func (usedContext) Value(any) any         { panic("the context was read") }
func (usedContext) Done() <-chan struct{} { panic("the context was read") }
func (usedContext) Err() error            { panic("the context was read") }

// The model's context marshallers write their value without reading the
// context: internal/gqlinline's guarded leaves wrap them with the parent's
// context instead of the field's (its leaves.go).
func TestModelContextMarshallersIgnoreTheirContext(t *testing.T) {
	for _, m := range []graphql.ContextMarshaler{model.MarshalMinorUnits(-model.MaxMinorUnits), model.MarshalInt(math.MaxInt32)} {
		var b bytes.Buffer
		require.NoError(t, m.MarshalGQLContext(usedContext{}, &b))
		assert.NotEmpty(t, b.String())
	}
}
