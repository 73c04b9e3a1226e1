package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The names the rewritten code calls: both live in the generated package,
// the first in a hand-written file, the second's values in the table this
// command writes.
const (
	inlineFunc   = "marshalSliceInline"
	deferredFunc = "newDeferredGroup"
	writerFunc   = "writeFields"
	tablePrefix  = "inline"
)

// object is one of gqlgen's object marshallers (_Order and the like).
type object struct {
	method       string // _Order
	name         string // Order
	implementors []string
	fields       []field
	waits        bool // some field may wait on I/O
	// opaque: the marshaller is not of the usual shape (the subscription
	// root), so nothing is known of its fields: it may wait.
	opaque bool
}

type field struct {
	name string
	// concurrent: gqlgen runs the field on a goroutine of its own (a
	// resolver or a directive), so it may wait on I/O.
	concurrent bool
	// batch: the field's resolver is a batch resolver, called once for
	// all the elements of the list its parent is in.
	batch bool
	// children are the object types the field's value marshals to;
	// abstract is set when that goes through an interface or a union.
	children []string
	abstract bool
}

// Rewrite rewrites gqlgen's generated executor (src) and returns it with the
// table of the fields that may wait on I/O (inline_gen.go's content).
// The rewrites named in skip are left out; a name that is not one of them
// is an error, so that a measurement never leaves out nothing unawares.
func Rewrite(src []byte, skip ...string) (out, table []byte, err error) {
	for _, k := range skip {
		if !slices.Contains(kinds, k) {
			return nil, nil, fmt.Errorf("-skip %q: no such rewrite (%s)", k, strings.Join(kinds, ", "))
		}
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "generated.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	funcs := map[string]*ast.FuncDecl{}
	implementors := map[string][]string{}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && d.Body != nil {
				funcs[d.Name.Name] = d
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 &&
					strings.HasSuffix(vs.Names[0].Name, "Implementors") {
					if names, ok := stringSlice(vs.Values[0]); ok {
						implementors[vs.Names[0].Name] = names
					}
				}
			}
		}
	}
	a := &analysis{funcs: funcs, objects: map[string]*object{}, byName: map[string]*object{}, reach: map[string]*reached{}}
	for name, fn := range funcs {
		if o := a.objectOf(name, fn, implementors); o != nil {
			a.objects[name] = o
			a.byName[o.name] = o
		}
	}
	if len(a.objects) == 0 {
		return nil, nil, errors.New("no object marshaller of gqlgen's shape (graphql.CollectFields(ec.OperationContext, sel, xImplementors) and a switch on field.Name) found")
	}
	for _, o := range sortedObjects(a.objects) {
		if err := a.fieldsOf(o); err != nil {
			return nil, nil, err
		}
	}
	a.settle()

	// Rewrite the list marshallers, in source order.
	var edits []edit
	used := map[string]bool{}
	rewritten, kept, groups, leaves, writers, nonNulls, guarded := 0, 0, 0, 0, 0, 0, 0
	scopes, argCaches := 0, 0
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Body == nil {
			continue
		}
		if fn.Name.Name == "Exec" {
			found, done := argsScopeEdits(fset, fn)
			edits = append(edits, kinded(found, kindArgs)...)
			scopes += len(found) + done
			continue
		}
		if from, to, text, ok, done := argsEdit(fset, fn); ok || done {
			if ok {
				edits = append(edits, edit{from: from, to: to, text: text, kind: kindArgs})
			}
			argCaches++
			// A field context function is nothing else this command
			// rewrites.
			continue
		}
		// An object marshaller's group for @defer'd fields: gqlgen builds
		// it (the object's path, a field set, a map) for every object,
		// though only a field with @defer uses it.
		if _, ok := a.objects[fn.Name.Name]; ok {
			for _, st := range fn.Body.List {
				as, ok := st.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || !isIdent(as.Lhs[0], "deferred") {
					continue
				}
				call, ok := as.Rhs[0].(*ast.CallExpr)
				switch {
				case ok && isSel(call.Fun, "graphql", "NewDeferredGroup") && len(call.Args) == 1 && isIdent(call.Args[0], "ctx"):
					edits = append(edits, edit{
						from: fset.Position(call.Pos()).Offset,
						to:   fset.Position(call.End()).Offset,
						text: deferredFunc + "(ctx, fields)",
						kind: kindDeferred,
					})
					groups++
				case ok && isIdent(call.Fun, deferredFunc):
					groups++
				default:
					return nil, nil, fmt.Errorf("%s: %s: deferred is not graphql.NewDeferredGroup(ctx)", fset.Position(as.Pos()), fn.Name.Name)
				}
			}
			// The object's field set, written without gqlgen's map of
			// written aliases and copy of each field (graph/inline.go,
			// writeFields).
			if ret, ok := fn.Body.List[len(fn.Body.List)-1].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
				switch r := ret.Results[0]; {
				case isIdent(r, "out"):
					edits = append(edits, edit{
						from: fset.Position(r.Pos()).Offset,
						to:   fset.Position(r.End()).Offset,
						text: writerFunc + "(out, fields)",
						kind: kindFields,
					})
					writers++
				case isWriterCall(r):
					writers++
				}
			}
		}
		if from, to, text, ok, done := nonNullEdit(fset, fn); ok || done {
			if ok {
				edits = append(edits, edit{from: from, to: to, text: text, kind: kindNulls})
			}
			nonNulls++
			continue
		}
		if from, to, text, ok := leafEdit(fset, fn, funcs); ok {
			edits = append(edits, edit{from: from, to: to, text: text, kind: kindLeaves})
			leaves++
			continue
		}
		if rewrittenLeaf(fn, funcs) {
			leaves++
			continue
		}
		if at, text, ok, done := guardedLeafEdit(fset, fn, funcs); ok || done {
			if ok {
				edits = append(edits, edit{from: at, to: at, text: text, kind: kindGuarded})
			}
			guarded++
			continue
		}
		var ferr error
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || ferr != nil {
				return ferr == nil
			}
			isConcurrent, isInline := isSel(call.Fun, "graphql", "MarshalSliceConcurrently"), isIdent(call.Fun, inlineFunc)
			if !isConcurrent && !isInline {
				return true
			}
			var elem *ast.FuncLit
			if isConcurrent {
				elem, ferr = concurrentShape(call)
			} else {
				elem, ferr = inlineShape(call)
			}
			if ferr != nil {
				ferr = fmt.Errorf("%s: %s: %w", fset.Position(call.Pos()), fn.Name.Name, ferr)
				return false
			}
			if !hasParam(fn, "sel") {
				ferr = fmt.Errorf("%s: %s: a list marshaller without a sel parameter", fset.Position(call.Pos()), fn.Name.Name)
				return false
			}
			r := a.reachedFrom(elem.Body)
			tbl := "nil"
			switch {
			case !a.anyWaits(r.objects):
			case r.abstract || len(r.objects) != 1 || a.byName[r.objects[0]].opaque:
				// Elements of several types, some of which may wait: the
				// table has no entry for an interface, so the list stays
				// concurrent.
				kept++
				if isInline {
					ferr = fmt.Errorf("%s: %s: already inline, but its elements may wait on I/O", fset.Position(call.Pos()), fn.Name.Name)
					return false
				}
				return true
			default:
				tbl = tableVar(r.objects[0])
				used[r.objects[0]] = true
			}
			rewritten++
			edits = append(edits, edit{
				from: fset.Position(call.Pos()).Offset,
				to:   fset.Position(elem.Pos()).Offset,
				text: fmt.Sprintf("%s(ctx, ec.OperationContext, sel, %s, len(v), ", inlineFunc, tbl),
				kind: kindLists,
			})
			return true
		})
		if ferr != nil {
			return nil, nil, ferr
		}
	}
	if rewritten == 0 {
		return nil, nil, fmt.Errorf("no list marshaller of gqlgen's shape (graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx, i) ...)) found (%d kept concurrent)", kept)
	}
	if leaves == 0 {
		return nil, nil, errors.New("no plain leaf of gqlgen's shape (return graphql.ResolveField(ctx, ec.OperationContext, field, …, func(ctx) (any, error) { return obj.F, nil }, nil, …)) found")
	}
	if groups == 0 {
		return nil, nil, errors.New("no object marshaller of gqlgen's shape (deferred := graphql.NewDeferredGroup(ctx)) found")
	}
	if guarded == 0 && nonNulls > 0 && modelScalars(funcs) {
		return nil, nil, errors.New("a model context scalar's non-null marshaller, but no leaf of it of gqlgen's shape")
	}
	if scopes == 0 || argCaches == 0 {
		return nil, nil, fmt.Errorf("%d operations given an arguments cache, %d field context functions using it: of gqlgen's shapes (ctx = graphql.WithLazyInputUnmarshalerIndex(ctx, inputUnmarshalers); ec.field_X_y_args(ctx, field.ArgumentMap(ec.Variables))) none found", scopes, argCaches)
	}
	if nonNulls == 0 {
		return nil, nil, errors.New("no non-null marshaller of a context scalar of gqlgen's shape (return graphql.WrapContextMarshaler(ctx, res)) found")
	}
	if writers == 0 {
		return nil, nil, errors.New("no object marshaller of gqlgen's shape (ending in return out) found")
	}
	edits = slices.DeleteFunc(edits, func(e edit) bool { return slices.Contains(skip, e.kind) })
	sort.Slice(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	var buf bytes.Buffer
	last := 0
	for _, e := range edits {
		buf.Write(src[last:e.from])
		buf.WriteString(e.text)
		last = e.to
	}
	buf.Write(src[last:])
	out, err = format.Source(buf.Bytes())
	if err != nil {
		return nil, nil, fmt.Errorf("rewritten source does not format: %w", err)
	}
	table, err = a.table(used, file.Name.Name)
	return out, table, err
}

// edit replaces src[from:to] with text.
type edit struct {
	from, to int
	text     string
	kind     string
}

// The rewrites by name, as gqlinline's -skip flag takes them.
const (
	kindLists    = "lists"
	kindDeferred = "deferred"
	kindFields   = "fields"
	kindNulls    = "nulls"
	kindLeaves   = "leaves"
	kindGuarded  = "guarded"
	kindArgs     = "args"
)

var kinds = []string{kindLists, kindDeferred, kindFields, kindNulls, kindLeaves, kindGuarded, kindArgs}

// kinded marks edits as of one rewrite.
func kinded(edits []edit, kind string) []edit {
	for i := range edits {
		edits[i].kind = kind
	}
	return edits
}

type analysis struct {
	funcs   map[string]*ast.FuncDecl
	objects map[string]*object // by method name
	byName  map[string]*object // by GraphQL type name
	reach   map[string]*reached
}

// objectOf recognises an object marshaller: its first statement collects the
// fields with the type's implementors, and it switches on the field names.
func (a *analysis) objectOf(name string, fn *ast.FuncDecl, implementors map[string][]string) *object {
	if !strings.HasPrefix(name, "_") || len(fn.Body.List) == 0 {
		return nil
	}
	as, ok := fn.Body.List[0].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return nil
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || !isSel(call.Fun, "graphql", "CollectFields") || len(call.Args) != 3 || !isIdent(call.Args[1], "sel") {
		return nil
	}
	id, ok := call.Args[2].(*ast.Ident)
	if !ok {
		return nil
	}
	impl, ok := implementors[id.Name]
	if !ok || len(impl) == 0 {
		return nil
	}
	return &object{method: name, name: impl[0], implementors: impl}
}

// fieldsOf reads the object marshaller's switch on field.Name.
func (a *analysis) fieldsOf(o *object) error {
	fn := a.funcs[o.method]
	var sw *ast.SwitchStmt
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if s, ok := n.(*ast.SwitchStmt); ok && sw == nil {
			if se, ok := s.Tag.(*ast.SelectorExpr); ok && isIdent(se.X, "field") && se.Sel.Name == "Name" {
				sw = s
				return false
			}
		}
		return sw == nil
	})
	if sw == nil {
		o.opaque, o.waits = true, true
		return nil
	}
	for _, st := range sw.Body.List {
		cc := st.(*ast.CaseClause)
		for _, v := range cc.List {
			lit, ok := v.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return fmt.Errorf("%s: a case that is not a field name", o.method)
			}
			name, _ := strconv.Unquote(lit.Value)
			if name == "__typename" {
				continue
			}
			f := field{name: name}
			var fieldFunc string
			for _, s := range cc.Body {
				ast.Inspect(s, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					if isSel(call.Fun, "out", "Concurrently") || isSel(call.Fun, "out", "ResolveConcurrently") {
						f.concurrent = true
					}
					if m, ok := ecMethod(call.Fun); ok && strings.HasPrefix(m, o.method+"_") && fieldFunc == "" {
						fieldFunc = m
					}
					return true
				})
			}
			ff := a.funcs[fieldFunc]
			if ff == nil {
				return fmt.Errorf("%s: field %q calls no field function of gqlgen's shape (ec.%s_%s)", o.method, name, o.method, name)
			}
			ast.Inspect(ff.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if m, ok := ecMethod(call.Fun); ok && strings.HasPrefix(m, "resolveBatch_") {
						f.batch = true
					}
				}
				return true
			})
			r := a.reachedFrom(ff.Body)
			f.children, f.abstract = r.objects, r.abstract
			o.fields = append(o.fields, f)
		}
	}
	return nil
}

// reached is what a marshaller leads to: the object types its values
// marshal as, and whether it gets there through an interface or a union.
type reached struct {
	objects  []string
	abstract bool
}

// reachedFrom follows the ec.marshal… calls in body (and the interface and
// union marshallers they call) down to the object marshallers.
func (a *analysis) reachedFrom(body ast.Node) reached {
	seen := map[string]bool{}
	var r reached
	var walk func(n ast.Node, viaAbstract bool)
	walk = func(n ast.Node, viaAbstract bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			m, ok := ecMethod(call.Fun)
			if !ok || seen[m] {
				return true
			}
			seen[m] = true
			if o, ok := a.objects[m]; ok {
				if !slices.Contains(r.objects, o.name) {
					r.objects = append(r.objects, o.name)
				}
				r.abstract = r.abstract || viaAbstract
				return true
			}
			fn := a.funcs[m]
			switch {
			case fn == nil:
			case strings.HasPrefix(m, "marshal"):
				walk(fn.Body, viaAbstract)
			case strings.HasPrefix(m, "_") && !strings.Contains(m[1:], "_"):
				// An interface or union marshaller (_Node): a type switch
				// onto the object marshallers.
				walk(fn.Body, true)
			}
			return true
		})
	}
	walk(body, false)
	sort.Strings(r.objects)
	return r
}

// waitsVia tells how a field may wait: not at all (""), by itself or through
// several types ("self"), or through the one object type it marshals to
// (that type's name).
func (a *analysis) waitsVia(f field) string {
	if f.concurrent && !f.batch {
		return "self"
	}
	if !a.anyWaits(f.children) {
		return ""
	}
	if f.abstract || len(f.children) != 1 || a.byName[f.children[0]].opaque {
		return "self"
	}
	return f.children[0]
}

func (a *analysis) anyWaits(types []string) bool {
	for _, t := range types {
		if o := a.byName[t]; o != nil && o.waits {
			return true
		}
	}
	return false
}

// settle marks every object with a field that may wait, until nothing
// changes.
func (a *analysis) settle() {
	for changed := true; changed; {
		changed = false
		for _, o := range a.objects {
			if o.waits {
				continue
			}
			for _, f := range o.fields {
				if a.waitsVia(f) != "" {
					o.waits, changed = true, true
					break
				}
			}
		}
	}
}

// table writes the Go file with the fields that may wait, for the types
// in used and those their fields lead to.
func (a *analysis) table(used map[string]bool, pkg string) ([]byte, error) {
	need := map[string]bool{}
	var visit func(t string)
	visit = func(t string) {
		if need[t] {
			return
		}
		need[t] = true
		for _, f := range a.byName[t].fields {
			if via := a.waitsVia(f); via != "" && via != "self" {
				visit(via)
			}
		}
	}
	for t := range used {
		visit(t)
	}
	names := make([]string, 0, len(need))
	for t := range need {
		names = append(names, t)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gqlinline from generated.go. DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	b.WriteString("// The fields of each object type that may wait on I/O (nil: the field\n")
	b.WriteString("// itself; a type: the fields of its value), for marshalSliceInline.\n")
	b.WriteString("var (\n")
	for _, t := range names {
		fmt.Fprintf(&b, "\t%s = &inlineType{implementors: %#v}\n", tableVar(t), a.byName[t].implementors)
	}
	b.WriteString(")\n\nfunc init() {\n")
	for _, t := range names {
		fmt.Fprintf(&b, "\t%s.fields = map[string]*inlineType{\n", tableVar(t))
		for _, f := range a.byName[t].fields {
			switch via := a.waitsVia(f); via {
			case "":
			case "self":
				fmt.Fprintf(&b, "\t\t%q: nil,\n", f.name)
			default:
				fmt.Fprintf(&b, "\t\t%q: %s,\n", f.name, tableVar(via))
			}
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// concurrentShape checks gqlgen's call
// graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx, i) …)
// and returns its element function.
func concurrentShape(call *ast.CallExpr) (*ast.FuncLit, error) {
	if len(call.Args) != 5 || !isIdent(call.Args[0], "ctx") || !isLenV(call.Args[1]) ||
		!isIntLit(call.Args[2], "0") || !isIdent(call.Args[3], "false") {
		return nil, errors.New("a call of graphql.MarshalSliceConcurrently not of the shape (ctx, len(v), 0, false, func…)")
	}
	fl, ok := call.Args[4].(*ast.FuncLit)
	if !ok {
		return nil, errors.New("graphql.MarshalSliceConcurrently without a function literal")
	}
	return fl, nil
}

// inlineShape checks an already rewritten call, so that running the
// command twice changes nothing.
func inlineShape(call *ast.CallExpr) (*ast.FuncLit, error) {
	if len(call.Args) != 6 || !isIdent(call.Args[0], "ctx") || !isLenV(call.Args[4]) {
		return nil, errors.New("a call of " + inlineFunc + " not of the shape this command writes")
	}
	fl, ok := call.Args[5].(*ast.FuncLit)
	if !ok {
		return nil, errors.New(inlineFunc + " without a function literal")
	}
	return fl, nil
}

// isWriterCall recognises the return this command writes in an object
// marshaller: writeFields(out, fields).
func isWriterCall(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	return ok && isIdent(call.Fun, writerFunc) && len(call.Args) == 2 && isIdent(call.Args[0], "out") && isIdent(call.Args[1], "fields")
}

func tableVar(typeName string) string {
	return tablePrefix + strings.ReplaceAll(typeName, "_", "")
}

func sortedObjects(m map[string]*object) []*object {
	out := make([]*object, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].method < out[j].method })
	return out
}

func stringSlice(e ast.Expr) ([]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		lit, ok := el.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return nil, false
		}
		s, _ := strconv.Unquote(lit.Value)
		out = append(out, s)
	}
	return out, true
}

func ecMethod(e ast.Expr) (string, bool) {
	se, ok := e.(*ast.SelectorExpr)
	if !ok || !isIdent(se.X, "ec") {
		return "", false
	}
	return se.Sel.Name, true
}

func isSel(e ast.Expr, x, sel string) bool {
	se, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(se.X, x) && se.Sel.Name == sel
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isIntLit(e ast.Expr, v string) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.INT && lit.Value == v
}

func isLenV(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	return ok && isIdent(call.Fun, "len") && len(call.Args) == 1 && isIdent(call.Args[0], "v")
}

func hasParam(fn *ast.FuncDecl, name string) bool {
	for _, p := range fn.Type.Params.List {
		for _, n := range p.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}
