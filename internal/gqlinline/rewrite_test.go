package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The exact call gqlgen generates in a list marshaller, which Rewrite
// anchors on.
const gqlgenListCall = "ret := graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {"

// A plain leaf's field function as gqlgen generates it.
const gqlgenLeaf = `return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Order_id(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.ID, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalNID2string(ctx, selections, v)
		},
		true,
		true,
	)`

// A field holding an object (a Money), as gqlgen generates it: no rewrite
// touches it, so it keeps ResolveField and the field middleware.
const gqlgenObjectField = `return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Order_amount(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Amount, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v *Money) graphql.Marshaler {
			return ec.marshalNMoney2ᚖMoney(ctx, selections, v)
		},
		true,
		true,
	)`

// fieldMiddleware is the middleware argument gqlgen's own test server
// passes every field (its schema puts a directive on all of them).
const fieldMiddleware = `func(ctx context.Context, next graphql.Resolver) graphql.Resolver {
			return ec._fieldMiddleware(ctx, obj, next)
		},`

// The checked-in executor is rewritten and its table current: running the
// command again changes neither file, and the lists the README query walks
// (customers, and each customer's orders) marshal inline unless their
// selection waits, with Order.customer (a loader) marked as waiting.
func TestGeneratedIsRewritten(t *testing.T) {
	gen, err := os.ReadFile("../../graph/generated.go")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := os.ReadFile("../../graph/inline_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	out, table, err := Rewrite(gen)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, gen) || !bytes.Equal(table, tbl) {
		t.Fatal("graph/generated.go or graph/inline_gen.go is not what gqlinline writes: run go generate ./...")
	}
	for _, typ := range []string{"Customer", "Order", "Person", "Wallet"} {
		re := regexp.MustCompile(`(?s)func \(ec \*executionContext\) marshal[NO]` + typ + `2ᚕ[^\n]*\n(?:[^\n]*\n){0,6}?\tret := ` +
			inlineFunc + `\(ctx, ec\.OperationContext, sel, ` + tableVar(typ) + `, len\(v\), `)
		if !re.Match(gen) {
			t.Errorf("the list marshaller of %s is not rewritten to %s with its table", typ, inlineFunc)
		}
	}
	if n := bytes.Count(gen, []byte("deferred := "+deferredFunc+"(ctx, fields)")); n == 0 || bytes.Contains(gen, []byte("graphql.NewDeferredGroup(")) {
		t.Errorf("%d deferred groups rewritten to %s, and gqlgen's left: %v", n, deferredFunc, bytes.Contains(gen, []byte("graphql.NewDeferredGroup(")))
	}
	for _, leaf := range []string{
		"return ec.marshalNString2string(ctx, field.Selections, obj.Number)",                                                    // Customer.number
		"return ec.marshalOString2ᚖstring(ctx, field.Selections, obj.Email)",                                                    // Contact.email
		"return ec.marshalNOrderStatus2githubᚗcomᚋfingraphᚋfingraphᚋgraphᚋmodelᚐOrderStatus(ctx, field.Selections, obj.Status)", // Order.status
		"return ec.marshalNID2string(ctx, field.Selections, obj.GlobalID())",                                                    // Order.id and the other nodes'
	} {
		if !bytes.Contains(gen, []byte(leaf)) {
			t.Errorf("the plain leaf %q is not rewritten", leaf)
		}
	}
	if !bytes.Contains(gen, []byte("if res := model.MarshalMinorUnits(obj.Amount); res != graphql.Null {")) {
		t.Error("Money.amount, a MinorUnits, is not a guarded leaf")
	}
	if n := bytes.Count(gen, []byte("return "+nonNullFunc+"(ctx, res)")); n < 2 || regexp.MustCompile(`(?s)func \(ec \*executionContext\) marshalN[^\n]*\n(?:\t[^\n]*\n)*?\treturn graphql\.WrapContextMarshaler`).Match(gen) {
		t.Errorf("%d non-null context scalars return %s, or one still returns gqlgen's wrapper", n, nonNullFunc)
	}
	if !bytes.Contains(gen, []byte("fc.Args, err = "+argsFunc+"(ctx, ec, field, (*executionContext).field_Customer_orders_args)")) ||
		bytes.Count(gen, []byte("ctx = "+argsScopeFunc+"(ctx)\n")) != 2 {
		t.Error("Customer.orders's arguments are not cached per operation, or the query and the mutation have no cache")
	}
	objects := bytes.Count(gen, []byte("out := graphql.NewFieldSet(fields)"))
	if n := bytes.Count(gen, []byte("return "+writerFunc+"(out, fields)\n")); n == 0 || n != objects || bytes.Contains(gen, []byte("\treturn out\n")) {
		t.Errorf("%d of %d object marshallers return %s, and gqlgen's return out is left: %v", n, objects, writerFunc, bytes.Contains(gen, []byte("\treturn out\n")))
	}
	if !regexp.MustCompile(`(?s)inlineOrder\.fields = map\[string\]\*inlineType\{\s*"customer": nil,`).Match(tbl) {
		t.Errorf("inline_gen.go does not mark Order.customer as waiting:\n%s", tbl)
	}
	if !regexp.MustCompile(`(?s)inlineCustomer\.fields = map\[string\]\*inlineType\{\s*"orders": +inlineOrder,`).Match(tbl) {
		t.Errorf("inline_gen.go does not lead Customer.orders (a batch resolver) to Order's fields:\n%s", tbl)
	}
}

// The gqlgen in go.mod still generates the shape Rewrite anchors on: its own
// test server's executor (generated by the same templates) has the call,
// and Rewrite rewrites every one of them. A gqlgen upgrade that changes
// the shape fails here (and fails `go generate`).
func TestPinnedGqlgenGeneratesTheRewrittenShape(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/99designs/gqlgen").Output()
	if err != nil {
		t.Fatalf("go list gqlgen: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "codegen", "testserver", "singlefile", "generated.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(src, []byte(gqlgenListCall))
	if n == 0 {
		t.Fatalf("gqlgen's generated code no longer has %q", gqlgenListCall)
	}
	// Its schema puts a directive on every field, so none is a plain leaf:
	// without the directive's middleware its struct-field leaves are, and
	// Rewrite must find them.
	src = bytes.ReplaceAll(src, []byte(fieldMiddleware), []byte("nil,"))
	out, _, err := Rewrite(src)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(out, []byte("(ctx, field.Selections, obj.")) == 0 {
		t.Error("no plain leaf of gqlgen's test server rewritten")
	}
	left := bytes.Count(out, []byte("graphql.MarshalSliceConcurrently("))
	rewritten := bytes.Count(out, []byte(inlineFunc+"(ctx, ec.OperationContext, sel, "))
	if rewritten == 0 || rewritten+left != n {
		t.Errorf("of gqlgen's %d list calls, %d rewritten and %d left", n, rewritten, left)
	}
	groups := bytes.Count(src, []byte("deferred := graphql.NewDeferredGroup(ctx)"))
	if groups == 0 || bytes.Count(out, []byte("deferred := "+deferredFunc+"(ctx, fields)")) != groups {
		t.Errorf("of gqlgen's %d deferred groups, %d rewritten", groups, bytes.Count(out, []byte(deferredFunc+"(ctx, fields)")))
	}
	objects := bytes.Count(src, []byte("out := graphql.NewFieldSet(fields)"))
	if n := bytes.Count(out, []byte("return "+writerFunc+"(out, fields)\n")); objects == 0 || n != objects {
		t.Errorf("of gqlgen's %d object marshallers, %d return %s", objects, n, writerFunc)
	}
}

// A call of MarshalSliceConcurrently that is not of the known shape, or no
// list marshaller at all, is an error, never a silent skip.
func TestRefusesUnknownShapes(t *testing.T) {
	base := `package graph

var orderImplementors = []string{"Order"}

func (ec *executionContext) _Order(ctx context.Context, sel ast.SelectionSet, obj *Order) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, orderImplementors)
	deferred := graphql.NewDeferredGroup(ctx)
	for i, field := range fields {
		switch field.Name {
		case "id":
			out.Values[i] = ec._Order_id(ctx, field, obj)
		case "amount":
			out.Values[i] = ec._Order_amount(ctx, field, obj)
		}
	}
	return out
}

func (e *executableSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	return func(ctx context.Context) *graphql.Response {
		ctx = graphql.WithLazyInputUnmarshalerIndex(ctx, inputUnmarshalers)
		data := ec._Order(ctx, opCtx.Operation.SelectionSet, nil)
		var buf bytes.Buffer
		data.MarshalGQL(&buf)
		return &graphql.Response{Data: buf.Bytes()}
	}
}

func (ec *executionContext) fieldContext_Order_amount(ctx context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	fc = &graphql.FieldContext{Object: "Order", Field: field}
	if fc.Args, err = ec.field_Order_amount_args(ctx, field.ArgumentMap(ec.Variables)); err != nil {
		return fc, err
	}
	return fc, nil
}

var moneyImplementors = []string{"Money"}

func (ec *executionContext) _Money(ctx context.Context, sel ast.SelectionSet, obj *Money) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, moneyImplementors)
	deferred := graphql.NewDeferredGroup(ctx)
	for i, field := range fields {
		switch field.Name {
		case "currency":
			out.Values[i] = ec._Money_currency(ctx, field, obj)
		}
	}
	return out
}

func (ec *executionContext) _Money_currency(ctx context.Context, field graphql.CollectedField, obj *Money) (ret graphql.Marshaler) {
	return ec.marshalNID2string(ctx, field.Selections, obj.Currency)
}

func (ec *executionContext) _Order_amount(ctx context.Context, field graphql.CollectedField, obj *Order) (ret graphql.Marshaler) {
	OBJECTFIELD
}

func (ec *executionContext) marshalNMinorUnits2int64(ctx context.Context, sel ast.SelectionSet, v int64) graphql.Marshaler {
	_ = sel
	res := MarshalMinorUnits(v)
	if res == graphql.Null {
		graphql.AddInvalidNullFromMarshaler(ctx, "MinorUnits!")
	}
	return graphql.WrapContextMarshaler(ctx, res)
}

func (ec *executionContext) marshalNMoney2ᚖMoney(ctx context.Context, sel ast.SelectionSet, v *Money) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	return ec._Money(ctx, sel, v)
}

func (ec *executionContext) _Order_id(ctx context.Context, field graphql.CollectedField, obj *Order) (ret graphql.Marshaler) {
	LEAF
}

func (ec *executionContext) marshalNID2string(ctx context.Context, sel ast.SelectionSet, v string) graphql.Marshaler {
	_ = sel
	res := graphql.MarshalID(v)
	if res == graphql.Null {
		graphql.AddInvalidNullFromMarshaler(ctx, "ID!")
	}
	return res
}

func (ec *executionContext) marshalNOrder2ᚕ(ctx context.Context, sel ast.SelectionSet, v []*Order) graphql.Marshaler {
	CALL
		return ec._Order(ctx, sel, v[i])
	})
	return ret
}
`
	base = strings.Replace(base, "LEAF", gqlgenLeaf, 1)
	base = strings.Replace(base, "OBJECTFIELD", gqlgenObjectField, 1)
	good := strings.Replace(base, "CALL", gqlgenListCall, 1)
	out, table, err := Rewrite([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(inlineFunc+"(ctx, ec.OperationContext, sel, nil, len(v), func(ctx context.Context, i int)")) {
		t.Errorf("not rewritten:\n%s", out)
	}
	if !bytes.Contains(out, []byte("deferred := "+deferredFunc+"(ctx, fields)")) {
		t.Errorf("the deferred group is not rewritten:\n%s", out)
	}
	if !bytes.Contains(out, []byte("return ec.marshalNID2string(ctx, field.Selections, obj.ID)")) {
		t.Errorf("the plain leaf is not rewritten:\n%s", out)
	}
	if !bytes.Contains(out, []byte(gqlgenObjectField)) {
		t.Errorf("the object field is not gqlgen's:\n%s", out)
	}
	if !bytes.Contains(out, []byte("ctx = graphql.WithLazyInputUnmarshalerIndex(ctx, inputUnmarshalers)\n\t\tctx = "+argsScopeFunc+"(ctx)\n")) ||
		!bytes.Contains(out, []byte("fc.Args, err = "+argsFunc+"(ctx, ec, field, (*executionContext).field_Order_amount_args)")) {
		t.Errorf("the arguments are not cached:\n%s", out)
	}
	if !bytes.Contains(out, []byte("return "+nonNullFunc+"(ctx, res)")) {
		t.Errorf("the non-null context scalar is not rewritten:\n%s", out)
	}
	if !bytes.Contains(out, []byte("return "+writerFunc+"(out, fields)")) {
		t.Errorf("the object's field set is not rewritten:\n%s", out)
	}
	if again, _, err := Rewrite(out); err != nil || !bytes.Equal(again, out) {
		t.Errorf("a second rewrite changes the first: %v\n%s", err, again)
	}
	if bytes.Contains(table, []byte("inlineOrder")) {
		t.Errorf("a type with no waiting field has a table:\n%s", table)
	}
	for name, src := range map[string]string{
		"worker limit":     strings.Replace(base, "CALL", strings.Replace(gqlgenListCall, "0, false", "4, false", 1), 1),
		"no panic handler": strings.Replace(base, "CALL", strings.Replace(gqlgenListCall, "0, false", "0, true", 1), 1),
		"deferred group":   strings.Replace(strings.Replace(base, "CALL", gqlgenListCall, 1), "NewDeferredGroup(ctx)", "NewDeferredGroup(ctx, 1)", 1),
		"no list":          strings.Replace(base, "CALL", "ret := marshalEach(ctx, len(v), func(ctx context.Context, i int) graphql.Marshaler {", 1),
		"no plain leaf": strings.Replace(strings.Replace(strings.Replace(base, "CALL", gqlgenListCall, 1),
			"return obj.ID, nil", "return obj.Total(), nil", 1), "obj.Currency)", "obj.Currency())", 1),
		"no field set": strings.ReplaceAll(strings.Replace(base, "CALL", gqlgenListCall, 1), "return out\n", "return nil\n"),
	} {
		if _, _, err := Rewrite([]byte(src)); err == nil {
			t.Errorf("%s: rewritten without an error", name)
		}
	}

	// -skip leaves out the rewrites it names and only those, and refuses a
	// name that is no rewrite (a dropped one included).
	skipped, _, err := Rewrite([]byte(good), kindLists, kindLeaves)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(skipped, []byte(gqlgenListCall)) || !bytes.Contains(skipped, []byte(gqlgenLeaf)) ||
		!bytes.Contains(skipped, []byte("deferred := "+deferredFunc+"(ctx, fields)")) {
		t.Errorf("-skip lists,leaves: not the list and the leaf left as gqlgen's, the rest rewritten:\n%s", skipped)
	}
	if _, _, err := Rewrite([]byte(good), "enums"); err == nil {
		t.Error("-skip enums, no rewrite of that name: no error")
	}
}

// Every method of the model package whose name ends in GlobalID, which the
// plain-leaf rewrite calls without gqlgen's panic recovery, only formats
// ids: its statements are relay.ID calls, returns of them or of nil, an
// address of the id it made, and ifs on its own fields. A method that does
// more (a lookup, a map read, an index) fails here.
func TestGlobalIDMethodsOnlyFormatIDs(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("../../graph/model/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("graph/model: %v", err)
	}
	found := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !strings.HasSuffix(fn.Name.Name, "GlobalID") {
				continue
			}
			found++
			recv := fn.Recv.List[0].Names[0].Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if !isSel(n.Fun, "relay", "ID") && !isSel(n.Fun, "relay", "GatewayEventRaw") {
						t.Errorf("%s: %s calls %s", fset.Position(n.Pos()), fn.Name.Name, exprString(n.Fun))
					}
				case *ast.IndexExpr, *ast.SliceExpr, *ast.TypeAssertExpr, *ast.FuncLit, *ast.GoStmt, *ast.DeferStmt:
					t.Errorf("%s: %s does more than format ids", fset.Position(n.Pos()), fn.Name.Name)
				case *ast.StarExpr:
					// A nil check comes first: *recv.F is read only after it.
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && id.Name != recv && id.Name != "relay" {
						t.Errorf("%s: %s reads %s.%s", fset.Position(n.Pos()), fn.Name.Name, id.Name, n.Sel.Name)
					}
				}
				return true
			})
		}
	}
	if found < 4 {
		t.Fatalf("found %d GlobalID methods in graph/model, expected the nodes' and the references'", found)
	}
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}
