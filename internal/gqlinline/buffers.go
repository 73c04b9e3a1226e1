package main

import (
	"go/ast"
	"go/token"
)

// Answer buffers: gqlgen marshals a query's or a mutation's data into a
// bytes.Buffer that starts empty, so an answer of a few KB grows through
// seven or eight buffers, each copied into the next and left to the
// collector. The rewrite hands the marshalling to the package's
// marshalData, which starts the buffer at the size the operation's last
// answer had (graph/inline.go).

const dataFunc = "marshalData"

// dataEdits returns the rewrites of fn's `var buf bytes.Buffer;
// data.MarshalGQL(&buf)` pairs, and how many it found already rewritten.
func dataEdits(fset *token.FileSet, fn *ast.FuncDecl) (edits []edit, done int) {
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i, st := range block.List {
			if isDataCall(st) {
				done++
				continue
			}
			if i+1 >= len(block.List) || !isBufDecl(st) || !isMarshalIntoBuf(block.List[i+1]) {
				continue
			}
			edits = append(edits, edit{
				from: fset.Position(st.Pos()).Offset,
				to:   fset.Position(block.List[i+1].End()).Offset,
				text: "buf := " + dataFunc + "(opCtx.Operation, data)",
			})
		}
		return true
	})
	return edits, done
}

// isBufDecl recognises var buf bytes.Buffer.
func isBufDecl(st ast.Stmt) bool {
	d, ok := st.(*ast.DeclStmt)
	if !ok {
		return false
	}
	g, ok := d.Decl.(*ast.GenDecl)
	if !ok || g.Tok != token.VAR || len(g.Specs) != 1 {
		return false
	}
	vs, ok := g.Specs[0].(*ast.ValueSpec)
	return ok && len(vs.Names) == 1 && vs.Names[0].Name == "buf" && len(vs.Values) == 0 && isSel(vs.Type, "bytes", "Buffer")
}

// isMarshalIntoBuf recognises data.MarshalGQL(&buf).
func isMarshalIntoBuf(st ast.Stmt) bool {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := es.X.(*ast.CallExpr)
	if !ok || !isSel(c.Fun, "data", "MarshalGQL") || len(c.Args) != 1 {
		return false
	}
	u, ok := c.Args[0].(*ast.UnaryExpr)
	return ok && u.Op == token.AND && isIdent(u.X, "buf")
}

// isDataCall recognises the rewrite: buf := marshalData(opCtx.Operation, data).
func isDataCall(st ast.Stmt) bool {
	as, ok := st.(*ast.AssignStmt)
	if !ok || len(as.Lhs) != 1 || !isIdent(as.Lhs[0], "buf") || len(as.Rhs) != 1 {
		return false
	}
	c, ok := as.Rhs[0].(*ast.CallExpr)
	return ok && isIdent(c.Fun, dataFunc) && len(c.Args) == 2 && isSel(c.Args[0], "opCtx", "Operation") && isIdent(c.Args[1], "data")
}
