package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
)

// Plain object fields: a field whose value is a struct field holding one
// object that is not a Node (Order.amount, a Money; Customer.contact, a
// Contact) goes through graphql.ResolveField too, whose closures, boxed
// result and middleware call cost a handful of allocations per object
// before the object's own marshaller runs. Its field function is rewritten
// to what ResolveField does for it, without those:
//
//   - the field context is made by the same generated function and put in
//     the context the object's fields see, with the value as its Result, so
//     the paths and parents its children read are the same;
//   - a panic below is recovered into the operation's errors and a null, as
//     ResolveField's recovery does;
//   - a nil value reaches the marshaller, as it does through ResolveField
//     (a typed nil pointer is never a nil interface there), which reports a
//     non-null field's null itself;
//   - the field middleware is not called: the only one, livequery's
//     WatchFields, records Nodes and lists of Nodes, and the value is
//     neither (its type's implementors do not include Node); no extension in
//     the gateway intercepts fields (leaves.go).

// objectFieldEdit returns the rewrite of fn's body when fn is a plain object
// field's function of gqlgen's shape.
func (a *analysis) objectFieldEdit(fset *token.FileSet, fn *ast.FuncDecl) (from, to int, text string, ok bool) {
	ret, call, isCall := resolveFieldCall(fn, 1)
	if !isCall {
		return 0, 0, "", false
	}
	fieldContext, isFC := callsFieldContext(call.Args[3])
	if !isFC {
		return 0, 0, "", false
	}
	fieldName, isField := readsObjField(call.Args[4])
	if !isField || fieldName[len(fieldName)-1] == ')' {
		return 0, 0, "", false
	}
	marshal, isMarshal := marshallerOf(call.Args[6])
	if !isMarshal || !a.plainObjectMarshaller(marshal) {
		return 0, 0, "", false
	}
	body := fmt.Sprintf(`fc, err := ec.%s(ctx, field)
	if err != nil {
		return graphql.Null
	}
	ctx = graphql.WithFieldContext(ctx, fc)
	defer func() {
		if r := recover(); r != nil {
			ec.OperationContext.Error(ctx, ec.OperationContext.Recover(ctx, r))
			ret = graphql.Null
		}
	}()
	fc.Result = obj.%s
	return ec.%s(ctx, field.Selections, obj.%s)`, fieldContext, fieldName, marshal, fieldName)
	return fset.Position(ret.Pos()).Offset, fset.Position(ret.End()).Offset, body, true
}

// rewrittenObjectField reports whether fn is a plain object field this
// command already rewrote: it starts with the field context's function and
// ends by returning the plain object marshaller's result.
func (a *analysis) rewrittenObjectField(fn *ast.FuncDecl) bool {
	if len(fn.Body.List) != 6 {
		return false
	}
	as, ok := fn.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 || len(as.Lhs) != 2 || !isIdent(as.Lhs[0], "fc") {
		return false
	}
	if c, ok := as.Rhs[0].(*ast.CallExpr); !ok || !isFieldContextCall(c) {
		return false
	}
	ret, ok := fn.Body.List[5].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 3 || !isSel(call.Args[1], "field", "Selections") {
		return false
	}
	name, ok := ecMethod(call.Fun)
	return ok && a.plainObjectMarshaller(name)
}

// plainObjectMarshaller reports whether the marshaller name marshals one
// object (not a list, an interface or a union) whose type is not a Node.
func (a *analysis) plainObjectMarshaller(name string) bool {
	fn := a.funcs[name]
	if fn == nil {
		return false
	}
	list := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && (isIdent(c.Fun, inlineFunc) || isSel(c.Fun, "graphql", "MarshalSliceConcurrently")) {
			list = true
		}
		return !list
	})
	if list {
		return false
	}
	r := a.reachedFrom(fn.Body)
	if r.abstract || len(r.objects) != 1 {
		return false
	}
	o := a.byName[r.objects[0]]
	return o != nil && !o.opaque && !slices.Contains(o.implementors, "Node")
}

// callsFieldContext reports whether e is func(ctx, field)
// (*graphql.FieldContext, error) { return ec.fieldContext_X_y(ctx, field) },
// and fieldContext_X_y.
func callsFieldContext(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.FuncLit)
	if !ok || len(lit.Body.List) != 1 {
		return "", false
	}
	ret, ok := lit.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || !isFieldContextCall(call) {
		return "", false
	}
	name, _ := ecMethod(call.Fun)
	return name, true
}

// isFieldContextCall recognises ec.fieldContext_X_y(ctx, field).
func isFieldContextCall(call *ast.CallExpr) bool {
	name, ok := ecMethod(call.Fun)
	return ok && len(name) > len("fieldContext_") && name[:len("fieldContext_")] == "fieldContext_" &&
		len(call.Args) == 2 && isIdent(call.Args[0], "ctx") && isIdent(call.Args[1], "field")
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
