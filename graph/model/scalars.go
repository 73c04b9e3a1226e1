package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/gqlerr"
)

// MaxMinorUnits is the largest MinorUnits value, 2^53-1: the largest
// integer that every JSON client reads exactly (JavaScript's Number is a
// float64, and so are the numbers of many JSON parsers). Money beyond it
// would reach a client rounded, so the graph neither takes nor gives it.
const MaxMinorUnits = 1<<53 - 1

// MarshalMinorUnits writes an amount of minor units as a JSON number. An
// amount beyond ±MaxMinorUnits, which no client would read exactly, is
// written as null: on a non-null field gqlgen then reports the field and
// nulls its parent, so a wrong number never reaches a client.
func MarshalMinorUnits(v int64) graphql.ContextMarshaler {
	if v > MaxMinorUnits || v < -MaxMinorUnits {
		return graphql.Null
	}
	return writeInt(v)
}

// UnmarshalMinorUnits reads an amount of minor units: a JSON number that is
// a whole number within ±MaxMinorUnits. A string, a fraction or a number out
// of range is refused as BAD_USER_INPUT naming the argument path, before
// any resolver sees it. Whether an amount must be positive is each field's
// rule, checked by its resolver.
func UnmarshalMinorUnits(ctx context.Context, v any) (int64, error) {
	n, err := wholeNumber(ctx, v, "MinorUnits", "a whole number of minor units")
	if err != nil {
		return 0, err
	}
	if n > MaxMinorUnits || n < -MaxMinorUnits {
		field := argPath(ctx)
		return 0, gqlerr.BadInput(field, "%s must be between -%d and %d minor units, the range every client reads exactly",
			nameOr(field, "an amount"), int64(MaxMinorUnits), int64(MaxMinorUnits))
	}
	return n, nil
}

// MarshalInt writes an Int. GraphQL's Int is a signed 32-bit integer
// (spec, section 3.5.1); a value beyond it is written as null, like an
// out-of-range MinorUnits.
func MarshalInt(v int64) graphql.ContextMarshaler {
	if v > math.MaxInt32 || v < math.MinInt32 {
		return graphql.Null
	}
	return writeInt(v)
}

// UnmarshalInt reads an Int: a JSON number that is a whole number within
// 32 bits. gqlgen's own Int also takes a string of digits and any int64;
// the spec refuses both, and so does the graph, with BAD_USER_INPUT naming
// the argument path.
func UnmarshalInt(ctx context.Context, v any) (int64, error) {
	n, err := wholeNumber(ctx, v, "Int", "a whole number")
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		field := argPath(ctx)
		return 0, gqlerr.BadInput(field, "%s must be between %d and %d, a 32-bit Int", nameOr(field, "an Int"),
			math.MinInt32, math.MaxInt32)
	}
	return n, nil
}

func writeInt(v int64) graphql.ContextMarshaler {
	return graphql.ContextWriterFunc(func(_ context.Context, w io.Writer) error {
		_, err := w.Write(strconv.AppendInt(nil, v, 10))
		return err
	})
}

// wholeNumber reads a JSON number without a fraction or an exponent. The
// transports decode variables with json.Number; a literal in the document
// arrives as int64 (or float64 for a literal with a fraction).
func wholeNumber(ctx context.Context, v any, scalar, what string) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, nil
		}
		if _, err := strconv.ParseFloat(string(x), 64); err != nil || strings.ContainsAny(string(x), ".eE") {
			// A fraction or an exponent: not an integer as written.
			break
		}
		// Digits only, but beyond int64: out of any range the graph takes.
		field := argPath(ctx)
		return 0, gqlerr.BadInput(field, "%s is out of range for %s", nameOr(field, "a number"), scalar)
	case string:
		field := argPath(ctx)
		return 0, gqlerr.BadInput(field, "%s must be %s given as a JSON number, not a string", nameOr(field, "the value"), what)
	}
	field := argPath(ctx)
	return 0, gqlerr.BadInput(field, "%s must be %s (%s), got %s", nameOr(field, "the value"), what, scalar, kindOf(v))
}

func kindOf(v any) string {
	switch v.(type) {
	case float32, float64, json.Number:
		return "a number with a fraction or an exponent"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// argPath is the path of the argument being read, as the resolvers name
// input fields: "input.items.list[0].amount". It leaves out the response
// path of the field the argument belongs to.
func argPath(ctx context.Context) string {
	var parts []string
	for pc := graphql.GetPathContext(ctx); pc != nil; pc = pc.Parent {
		switch {
		case pc.Index != nil:
			parts = append(parts, "["+strconv.Itoa(*pc.Index)+"]")
		case pc.Field != nil:
			parts = append(parts, *pc.Field)
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func nameOr(field, def string) string {
	if field == "" {
		return def
	}
	return field
}
