package main

import (
	"go/ast"
	"go/token"
	"strings"
)

// Non-null context scalars: for a custom scalar whose marshaller takes a
// context (model.MarshalMinorUnits, model.MarshalInt), gqlgen's non-null
// marshaller reports an out-of-range value's null and then returns it
// wrapped in graphql.WrapContextMarshaler. The wrapped null is no longer
// graphql.Null, so the object holding the field never counts it as
// invalid: the answer has a null where the schema promises a value, and the
// parent is not nulled as GraphQL's non-null rule requires. The rewrite
// makes those marshallers return graphql.Null itself for a null
// (graph/inline.go, nonNullContextMarshaler).

const nonNullFunc = "nonNullContextMarshaler"

// nonNullEdit returns the rewrite of fn's final return when fn is a
// non-null marshaller of a context scalar of gqlgen's shape: return
// graphql.WrapContextMarshaler(ctx, res).
func nonNullEdit(fset *token.FileSet, fn *ast.FuncDecl) (from, to int, text string, ok, done bool) {
	if !strings.HasPrefix(fn.Name.Name, "marshalN") || len(fn.Body.List) == 0 {
		return 0, 0, "", false, false
	}
	ret, isRet := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt)
	if !isRet || len(ret.Results) != 1 {
		return 0, 0, "", false, false
	}
	call, isCall := ret.Results[0].(*ast.CallExpr)
	if !isCall || len(call.Args) != 2 || !isIdent(call.Args[0], "ctx") || !isIdent(call.Args[1], "res") {
		return 0, 0, "", false, false
	}
	if isIdent(call.Fun, nonNullFunc) {
		return 0, 0, "", false, true
	}
	if !isSel(call.Fun, "graphql", "WrapContextMarshaler") {
		return 0, 0, "", false, false
	}
	return fset.Position(call.Fun.Pos()).Offset, fset.Position(call.Fun.End()).Offset, nonNullFunc, true, false
}

// modelScalars reports whether some non-null marshaller is of a context
// scalar of the model package (guardedLeafEdit's).
func modelScalars(funcs map[string]*ast.FuncDecl) bool {
	for _, fn := range funcs {
		if _, ok := modelContextScalar(fn); ok {
			return true
		}
	}
	return false
}
