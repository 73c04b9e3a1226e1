package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"strings"
)

// Plain leaves: gqlgen resolves every field through graphql.ResolveField,
// which for a field that only reads a struct field of a scalar still makes
// a field context, a context holding it, a closure for the middleware chain
// and an interface holding the value, and calls the operation's field
// middleware with it. For a leaf whose value is a struct field (no resolver,
// no directive) and whose marshaller cannot fail (a built-in String, ID,
// Int or Boolean, or an enum), none of that can matter:
//
//   - reading a field of the non-nil object gqlgen passes cannot panic;
//   - the marshaller only wraps the value; it is written later, outside
//     ResolveField, whichever way it was made;
//   - the field middleware sees a scalar, never a Node (the only field
//     middleware, livequery.WatchFields, watches Nodes), and no extension in
//     the gateway intercepts fields (gqlhttp adds none, which no test
//     enforces: an extension that must see every scalar field needs
//     -skip leaves,guarded);
//   - a leaf has no children to read the field context's Result.
//
// Such a field function is rewritten to call its marshaller directly.
//
// A global id is a method, not a struct field (Order.id is obj.GlobalID()),
// and is the one method leaf taken as plain: every method of the model
// package whose name ends in GlobalID only formats the raw ids the object
// carries with relay.ID, which panics on nothing but a wrong count of parts
// fixed in the method's own code (TestGlobalIDMethodsOnlyFormatIDs reads
// them). Its marshaller must be a safe one; a nullable id (*string, nil
// for no reference) is null either way.

// safeMarshals are the graphql package's marshallers of built-in scalars:
// they never return graphql.Null for a value, so the generated null check
// after them, which reads the field context, never runs.
var safeMarshals = map[string]bool{
	"MarshalString": true, "MarshalID": true, "MarshalInt": true, "MarshalInt32": true,
	"MarshalInt64": true, "MarshalBoolean": true,
}

// leafEdit returns the rewrite of fn when it is a plain leaf's field
// function of gqlgen's shape:
//
//	return graphql.ResolveField(ctx, ec.OperationContext, field,
//		func(ctx, field) (*graphql.FieldContext, error) { ... },
//		func(ctx context.Context) (any, error) { return obj.F, nil },  // or obj.XGlobalID()
//		nil,
//		func(ctx context.Context, selections ast.SelectionSet, v T) graphql.Marshaler {
//			return ec.marshalX(ctx, selections, v)
//		},
//		true, nonNull)
func leafEdit(fset *token.FileSet, fn *ast.FuncDecl, funcs map[string]*ast.FuncDecl) (from, to int, text string, ok bool) {
	_, call, isCall := resolveFieldCall(fn, 1)
	if !isCall {
		return 0, 0, "", false
	}
	fieldName, isField := readsObjField(call.Args[4])
	if !isField {
		return 0, 0, "", false
	}
	marshal, isSafe := safeMarshaller(call.Args[6], funcs)
	if !isSafe {
		return 0, 0, "", false
	}
	return fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset,
		fmt.Sprintf("ec.%s(ctx, field.Selections, obj.%s)", marshal, fieldName), true
}

// resolveFieldCall returns fn's final return and its graphql.ResolveField
// call when fn is a field function of gqlgen's shape (obj and field
// parameters, at most maxStmts statements) whose call has no middleware and
// recovers panics: return graphql.ResolveField(ctx, ec.OperationContext,
// field, …, nil, …, true, nonNull).
func resolveFieldCall(fn *ast.FuncDecl, maxStmts int) (*ast.ReturnStmt, *ast.CallExpr, bool) {
	if !hasParam(fn, "obj") || !hasParam(fn, "field") || len(fn.Body.List) == 0 || len(fn.Body.List) > maxStmts {
		return nil, nil, false
	}
	ret, isRet := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt)
	if !isRet || len(ret.Results) != 1 {
		return nil, nil, false
	}
	call, isCall := ret.Results[0].(*ast.CallExpr)
	if !isCall || !isSel(call.Fun, "graphql", "ResolveField") || len(call.Args) != 9 ||
		!isIdent(call.Args[0], "ctx") || !isSel(call.Args[1], "ec", "OperationContext") || !isIdent(call.Args[2], "field") ||
		!isIdent(call.Args[5], "nil") || !isIdent(call.Args[7], "true") {
		return nil, nil, false
	}
	return ret, call, true
}

// readsObjField reports whether e is func(ctx context.Context) (any, error)
// { return obj.F, nil } or { return obj.XGlobalID(), nil }, and F or
// XGlobalID().
func readsObjField(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.FuncLit)
	if !ok || len(lit.Body.List) != 1 {
		return "", false
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 2 || !isIdent(ret.Results[1], "nil") {
		return "", false
	}
	return objRead(ret.Results[0])
}

// objRead reports whether e is obj.F or obj.XGlobalID(), and returns it
// without the obj.
func objRead(e ast.Expr) (string, bool) {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) == 0 {
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "obj") && strings.HasSuffix(sel.Sel.Name, "GlobalID") {
			return sel.Sel.Name + "()", true
		}
		return "", false
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X, "obj") {
		return "", false
	}
	return sel.Sel.Name, true
}

// safeMarshaller reports whether e is func(ctx, selections, v T)
// graphql.Marshaler { return ec.marshalX(ctx, selections, v) } and
// marshalX is safe (safeMarshal).
func safeMarshaller(e ast.Expr, funcs map[string]*ast.FuncDecl) (string, bool) {
	name, ok := marshallerOf(e)
	return name, ok && safeMarshal(name, funcs)
}

// marshallerOf reports whether e is func(ctx, selections, v T)
// graphql.Marshaler { return ec.marshalX(ctx, selections, v) }, and
// marshalX.
func marshallerOf(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.FuncLit)
	if !ok || len(lit.Body.List) != 1 || len(lit.Type.Params.List) != 3 {
		return "", false
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 3 || !isIdent(call.Args[0], "ctx") || !isIdent(call.Args[1], "selections") || !isIdent(call.Args[2], "v") {
		return "", false
	}
	return ecMethod(call.Fun)
}

// rewrittenLeaf reports whether fn is a plain leaf this command already
// rewrote: return ec.marshalX(ctx, field.Selections, obj.F), marshalX safe.
func rewrittenLeaf(fn *ast.FuncDecl, funcs map[string]*ast.FuncDecl) bool {
	if len(fn.Body.List) != 1 {
		return false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 3 || !isIdent(call.Args[0], "ctx") || !isSel(call.Args[1], "field", "Selections") {
		return false
	}
	if _, ok := objRead(call.Args[2]); !ok {
		return false
	}
	name, ok := ecMethod(call.Fun)
	return ok && safeMarshal(name, funcs)
}

// safeMarshal reports whether the marshaller name cannot fail: it returns
// its enum value (return v, the value's own MarshalGQL writing it later) or
// a safeMarshals result.
func safeMarshal(name string, funcs map[string]*ast.FuncDecl) bool {
	fn := funcs[name]
	if fn == nil {
		return false
	}
	body := fn.Body.List
	if len(body) == 1 {
		// An enum: return v, its type from the model package.
		r, ok := body[0].(*ast.ReturnStmt)
		ptype := fn.Type.Params.List[len(fn.Type.Params.List)-1].Type
		sel, isSelType := ptype.(*ast.SelectorExpr)
		return ok && len(r.Results) == 1 && isIdent(r.Results[0], "v") && isSelType && isIdent(sel.X, "model")
	}
	// A built-in scalar: blank uses of sel and ctx, a nil check of a
	// pointer, res := graphql.MarshalX(v or *v), the null check that
	// follows it, return res; nothing else.
	marshalled := false
	for _, st := range body {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if len(st.Lhs) != 1 || len(st.Rhs) != 1 {
				return false
			}
			if isIdent(st.Lhs[0], "_") && (isIdent(st.Rhs[0], "sel") || isIdent(st.Rhs[0], "ctx")) {
				continue
			}
			c, ok := st.Rhs[0].(*ast.CallExpr)
			if !ok || !isIdent(st.Lhs[0], "res") || len(c.Args) != 1 || !isValue(c.Args[0]) {
				return false
			}
			s, ok := c.Fun.(*ast.SelectorExpr)
			if !ok || !isIdent(s.X, "graphql") || !safeMarshals[s.Sel.Name] {
				return false
			}
			marshalled = true
		case *ast.IfStmt:
			if !nullCheck(st) {
				return false
			}
		case *ast.ReturnStmt:
			if len(st.Results) != 1 || !isIdent(st.Results[0], "res") {
				return false
			}
		default:
			return false
		}
	}
	return marshalled
}

// isValue reports whether e is v or *v.
func isValue(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	return isIdent(e, "v")
}

// nullCheck recognises `if v == nil { return graphql.Null }` and `if res ==
// graphql.Null { … }`: the first answers null for a nil pointer, as the
// field's null does; the second never runs after a safeMarshals call.
func nullCheck(st *ast.IfStmt) bool {
	b, ok := st.Cond.(*ast.BinaryExpr)
	if !ok || b.Op != token.EQL || st.Init != nil || st.Else != nil {
		return false
	}
	switch {
	case isIdent(b.X, "v") && isIdent(b.Y, "nil"):
		if len(st.Body.List) != 1 {
			return false
		}
		r, ok := st.Body.List[0].(*ast.ReturnStmt)
		return ok && len(r.Results) == 1 && isSel(r.Results[0], "graphql", "Null")
	case isIdent(b.X, "res") && isSel(b.Y, "graphql", "Null"):
		return true
	}
	return false
}

// Guarded leaves: a custom scalar of the model package whose marshaller
// answers a value out of its range with null (MinorUnits beyond 2^53, Int
// beyond 32 bits) needs the field context only for that null, which it
// reports at the field's path. Its field function is rewritten to call the
// model's marshaller first and return its value at once when it is not
// null; a null goes on through gqlgen's ResolveField as before, so the
// error, its path and the parent's nulling are unchanged. The value is
// wrapped with the parent's context instead of the field's: the model's
// context marshallers use the context for nothing (model.writeInt), which
// TestModelContextMarshallersIgnoreTheirContext checks.
//
//	if res := model.MarshalX(obj.F); res != graphql.Null {
//		return graphql.WrapContextMarshaler(ctx, res)
//	}
//	return graphql.ResolveField(…)

// guardedLeafEdit returns the text to put before fn's ResolveField when fn
// is a leaf of such a scalar, or done when it already has it.
func guardedLeafEdit(fset *token.FileSet, fn *ast.FuncDecl, funcs map[string]*ast.FuncDecl) (at int, text string, ok, done bool) {
	ret, call, isCall := resolveFieldCall(fn, 2)
	if !isCall {
		return 0, "", false, false
	}
	fieldName, isField := readsObjField(call.Args[4])
	if !isField || strings.HasSuffix(fieldName, ")") {
		return 0, "", false, false
	}
	marshal, isMarshal := marshallerOf(call.Args[6])
	if !isMarshal {
		return 0, "", false, false
	}
	scalar, isScalar := modelContextScalar(funcs[marshal])
	if !isScalar {
		return 0, "", false, false
	}
	if len(fn.Body.List) == 2 {
		return 0, "", false, isGuard(fn.Body.List[0], scalar, fieldName)
	}
	return fset.Position(ret.Pos()).Offset, fmt.Sprintf(`if res := model.%s(obj.%s); res != graphql.Null {
		return graphql.WrapContextMarshaler(ctx, res)
	}
	`, scalar, fieldName), true, false
}

// modelContextScalar reports whether fn is a non-null marshaller of a
// context scalar of the model package, as gqlgen writes it (or as nulls.go
// rewrites it): res := model.MarshalX(v), the null check reporting it, and
// the return of res wrapped; and MarshalX.
func modelContextScalar(fn *ast.FuncDecl) (string, bool) {
	if fn == nil || !strings.HasPrefix(fn.Name.Name, "marshalN") || len(fn.Body.List) != 4 {
		return "", false
	}
	as, ok := fn.Body.List[1].(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || !isIdent(as.Lhs[0], "res") || len(as.Rhs) != 1 {
		return "", false
	}
	c, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(c.Args) != 1 || !isIdent(c.Args[0], "v") {
		return "", false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || !isIdent(sel.X, "model") {
		return "", false
	}
	ifs, ok := fn.Body.List[2].(*ast.IfStmt)
	if !ok || !nullCheck(ifs) {
		return "", false
	}
	ret, ok := fn.Body.List[3].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", false
	}
	rc, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || !(isSel(rc.Fun, "graphql", "WrapContextMarshaler") || isIdent(rc.Fun, nonNullFunc)) {
		return "", false
	}
	return sel.Sel.Name, true
}

// isGuard recognises the guard guardedLeafEdit writes.
func isGuard(st ast.Stmt, scalar, fieldName string) bool {
	ifs, ok := st.(*ast.IfStmt)
	if !ok || ifs.Init == nil || len(ifs.Body.List) != 1 {
		return false
	}
	as, ok := ifs.Init.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	c, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || !isSel(c.Fun, "model", scalar) || len(c.Args) != 1 {
		return false
	}
	f, ok := objRead(c.Args[0])
	return ok && f == fieldName
}
