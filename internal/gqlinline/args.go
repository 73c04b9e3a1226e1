package main

import (
	"go/ast"
	"go/token"
	"strings"
)

// Arguments once per operation: gqlgen works out a field's arguments in
// the field's context function, once for every object the field is
// selected on. For Customer.orders(start, end) under a list of customers
// that is the same arguments map, the same literal or variable values
// converted again, for every customer: about twenty allocations each. The
// rewrite has the context function ask the package's cachedArgs, which
// keeps, for the operation, the arguments each field of the document
// resolved to the first time (graph/inline.go). The arguments are a
// function of the field's place in the document and the operation's
// variables only; an error is never kept, so a field whose arguments fail
// reports it at every place, as before.

const (
	argsFunc      = "cachedArgs"
	argsScopeFunc = "withArgsCache"
)

// argsEdit returns the rewrite of a non-root field context function's
// arguments call, ec.field_X_y_args(ctx, field.ArgumentMap(ec.Variables)).
func argsEdit(fset *token.FileSet, fn *ast.FuncDecl) (from, to int, text string, ok, done bool) {
	name := fn.Name.Name
	if !strings.HasPrefix(name, "fieldContext_") || strings.HasPrefix(name, "fieldContext_Query_") ||
		strings.HasPrefix(name, "fieldContext_Mutation_") || strings.HasPrefix(name, "fieldContext_Subscription_") {
		return 0, 0, "", false, false
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		call, isCall := n.(*ast.CallExpr)
		if !isCall || ok || done {
			return !ok && !done
		}
		if isIdent(call.Fun, argsFunc) {
			done = true
			return false
		}
		m, isEC := ecMethod(call.Fun)
		if !isEC || !strings.HasPrefix(m, "field_") || !strings.HasSuffix(m, "_args") || len(call.Args) != 2 || !isIdent(call.Args[0], "ctx") {
			return true
		}
		am, isAM := call.Args[1].(*ast.CallExpr)
		if !isAM || !isSel(am.Fun, "field", "ArgumentMap") || len(am.Args) != 1 || !isSel(am.Args[0], "ec", "Variables") {
			return true
		}
		from, to = fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset
		text = argsFunc + "(ctx, ec, field, (*executionContext)." + m + ")"
		ok = true
		return false
	})
	return from, to, text, ok, done
}

// argsScopeEdits returns the rewrites that give each operation of Exec its
// cache: after each ctx = graphql.WithLazyInputUnmarshalerIndex(ctx,
// inputUnmarshalers), ctx = withArgsCache(ctx).
func argsScopeEdits(fset *token.FileSet, fn *ast.FuncDecl) (edits []edit, done int) {
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i, st := range block.List {
			if !isCtxAssign(st, "graphql", "WithLazyInputUnmarshalerIndex") {
				continue
			}
			if i+1 < len(block.List) && isCtxAssign(block.List[i+1], "", argsScopeFunc) {
				done++
				continue
			}
			at := fset.Position(st.End()).Offset
			edits = append(edits, edit{from: at, to: at, text: "\n\tctx = " + argsScopeFunc + "(ctx)"})
		}
		return true
	})
	return edits, done
}

// isCtxAssign recognises ctx = pkg.fn(ctx, …), or ctx = fn(ctx) without a
// package.
func isCtxAssign(st ast.Stmt, pkg, fn string) bool {
	as, ok := st.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || !isIdent(as.Lhs[0], "ctx") || len(as.Rhs) != 1 {
		return false
	}
	c, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(c.Args) == 0 || !isIdent(c.Args[0], "ctx") {
		return false
	}
	if pkg == "" {
		return isIdent(c.Fun, fn)
	}
	return isSel(c.Fun, pkg, fn)
}
