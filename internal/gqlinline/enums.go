package main

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
)

// Enums: gqlgen's enum types write their value with
// fmt.Fprint(w, strconv.Quote(e.String())), two allocations and a trip
// through fmt for every value answered. The enum marshallers are rewritten
// to return the package's enumValue(v), which writes the same bytes from a
// table of the values written so far (graph/inline.go); a value outside the
// enum still goes through the type's own MarshalGQL.
// TestEnumsAreGqlgens checks that every enum type in graph/model writes
// itself as gqlgen's template does.

const enumFunc = "enumValue"

// schemaEnum finds the enum definitions in the schema text gqlgen embeds
// in the generated executor.
var schemaEnum = regexp.MustCompile(`(?m)^enum ([_A-Za-z][_0-9A-Za-z]*) \{`)

// enumNames returns the schema's enum names.
func enumNames(src []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range schemaEnum.FindAllSubmatch(src, -1) {
		out[string(m[1])] = true
	}
	return out
}

// enumEdit returns the rewrite of a non-null enum marshaller's return v
// (its parameter v of the model package's type of an enum of the schema).
func enumEdit(fset *token.FileSet, fn *ast.FuncDecl, enums map[string]bool) (from, to int, text string, ok, done bool) {
	if !strings.HasPrefix(fn.Name.Name, "marshalN") || len(fn.Body.List) != 1 || len(fn.Type.Params.List) == 0 {
		return 0, 0, "", false, false
	}
	ptype, isSel := fn.Type.Params.List[len(fn.Type.Params.List)-1].Type.(*ast.SelectorExpr)
	if !isSel || !isIdent(ptype.X, "model") || !enums[ptype.Sel.Name] {
		return 0, 0, "", false, false
	}
	ret, isRet := fn.Body.List[0].(*ast.ReturnStmt)
	if !isRet || len(ret.Results) != 1 {
		return 0, 0, "", false, false
	}
	if isEnumCall(ret.Results[0]) {
		return 0, 0, "", false, true
	}
	if !isIdent(ret.Results[0], "v") {
		return 0, 0, "", false, false
	}
	return fset.Position(ret.Results[0].Pos()).Offset, fset.Position(ret.Results[0].End()).Offset, enumFunc + "(v)", true, false
}

// isEnumCall recognises enumValue(v).
func isEnumCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	return ok && isIdent(c.Fun, enumFunc) && len(c.Args) == 1 && isIdent(c.Args[0], "v")
}
