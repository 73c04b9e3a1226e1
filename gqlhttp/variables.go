package gqlhttp

import (
	"context"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// VariableCheck reads the variables of scalar type (and lists of them)
// through the gateway's own scalar rules before anything else uses them.
// The validator lets a string of digits through for an Int, which the
// gateway's Int refuses; the complexity limit, which reads arguments
// before execution does, then could not read the page size it multiplies
// by and refused the operation with an astronomical complexity instead of
// naming the variable. This runs before the complexity limit and refuses
// such a value as BAD_USER_INPUT naming the variable. Input objects are
// left to execution, which names the input field that is wrong; the
// complexity of a field reads none of their scalars.
type VariableCheck struct {
	// Schema declares the variables' types.
	Schema *ast.Schema
	// Scalars maps a scalar's name to the gateway's reading of it (an
	// error refuses the value).
	Scalars map[string]func(context.Context, any) error
}

var (
	_ graphql.HandlerExtension        = VariableCheck{}
	_ graphql.OperationContextMutator = VariableCheck{}
)

// ExtensionName implements graphql.HandlerExtension.
func (VariableCheck) ExtensionName() string { return "VariableCheck" }

// Validate implements graphql.HandlerExtension.
func (VariableCheck) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (v VariableCheck) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || len(v.Scalars) == 0 || v.Schema == nil {
		return nil
	}
	for _, def := range oc.Operation.VariableDefinitions {
		val, ok := oc.Variables[def.Variable]
		if !ok {
			continue
		}
		if err := v.check(ctx, v.Schema, def.Type, val, "$"+def.Variable, 0); err != nil {
			// Clients mark the input they bound the variable to, as
			// execution names it: the argument, not the variable.
			if field := argumentOf(oc.Doc, oc.Operation.SelectionSet, def.Variable); field != "" {
				err.Extensions["field"] = field
			}
			return err
		}
	}
	return nil
}

// maxListNesting bounds the walk through nested lists; the document and
// body limits already bound what a variable can hold.
const maxListNesting = 64

func (v VariableCheck) check(ctx context.Context, schema *ast.Schema, t *ast.Type, val any, path string, depth int) *gqlerror.Error {
	if val == nil || depth > maxListNesting {
		return nil
	}
	if t.Elem != nil {
		list, ok := val.([]any)
		if !ok {
			// One value where a list is expected is a list of one.
			return v.check(ctx, schema, t.Elem, val, path, depth+1)
		}
		for i, e := range list {
			if err := v.check(ctx, schema, t.Elem, e, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return nil
	}
	switch def.Kind {
	case ast.Scalar:
		read := v.Scalars[def.Name]
		if read == nil {
			return nil
		}
		if err := read(ctx, val); err != nil {
			msg := err.Error()
			if e, ok := gqlerr.As(err); ok {
				msg = e.Message
			}
			return &gqlerror.Error{
				Message:    "variable " + path + ": " + msg,
				Extensions: map[string]any{"code": string(gqlerr.BadUserInput), "variable": path, "field": strings.TrimPrefix(path, "$")},
			}
		}
	}
	return nil
}

// argumentOf names the first argument (or input field of one, as a dotted
// path) whose value is the variable name, walking fragments once each;
// "" when the variable feeds no argument.
func argumentOf(doc *ast.QueryDocument, set ast.SelectionSet, name string) string {
	seen := map[string]bool{}
	var walk func(ast.SelectionSet) string
	walk = func(set ast.SelectionSet) string {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				for _, a := range s.Arguments {
					if p := valueFeeds(a.Value, name, a.Name, 0); p != "" {
						return p
					}
				}
				if p := walk(s.SelectionSet); p != "" {
					return p
				}
			case *ast.InlineFragment:
				if p := walk(s.SelectionSet); p != "" {
					return p
				}
			case *ast.FragmentSpread:
				if seen[s.Name] || doc == nil {
					continue
				}
				seen[s.Name] = true
				if f := doc.Fragments.ForName(s.Name); f != nil {
					if p := walk(f.SelectionSet); p != "" {
						return p
					}
				}
			}
		}
		return ""
	}
	return walk(set)
}

// valueFeeds reports the path at which v uses the variable name, "" when
// it does not.
func valueFeeds(v *ast.Value, name, path string, depth int) string {
	if v == nil || depth > maxListNesting {
		return ""
	}
	switch v.Kind {
	case ast.Variable:
		if v.Raw == name {
			return path
		}
	case ast.ObjectValue:
		for _, c := range v.Children {
			if p := valueFeeds(c.Value, name, path+"."+c.Name, depth+1); p != "" {
				return p
			}
		}
	case ast.ListValue:
		for _, c := range v.Children {
			if p := valueFeeds(c.Value, name, path, depth+1); p != "" {
				return p
			}
		}
	}
	return ""
}
