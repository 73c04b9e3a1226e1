package schema

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/graph"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// update rewrites the committed snapshot instead of comparing with it.
var update = flag.Bool("update", false, "rewrite docs/schema.graphql from schema/*.graphqls")

// snapshotPath is the committed SDL snapshot, relative to this package.
const snapshotPath = "../docs/schema.graphql"

// loadSchema parses and validates every .graphqls file of the package, in
// file-name order (the order gqlgen reads them in, which fixes the order of
// fields added by `extend type`).
func loadSchema(t *testing.T) *ast.Schema {
	t.Helper()
	files, err := filepath.Glob("*.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no *.graphqls files in schema/")
	}
	sort.Strings(files)
	sources := make([]*ast.Source, 0, len(files))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: "schema/" + name, Input: string(b)})
	}
	s, gerr := gqlparser.LoadSchema(sources...)
	if gerr != nil {
		t.Fatalf("schema does not load: %v", gerr)
	}
	return s
}

// printSchema is the schema as SDL: gqlparser's formatter sorts types and
// directives by name and leaves built-ins out, so the text depends only on
// the schema (the same printer serves /schema.graphql, see web/web.go).
func printSchema(s *ast.Schema) string {
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchema(s)
	return b.String()
}

// described reports whether a description says something.
func described(d string) bool { return strings.TrimSpace(d) != "" }

// TestEveryTypeAndFieldIsDescribed keeps the playground's docs pane complete:
// every type, field, argument, input field and enum value the schema
// declares carries a description. The failure lists every missing one, with
// the file and line to add it at.
func TestEveryTypeAndFieldIsDescribed(t *testing.T) {
	s := loadSchema(t)
	type gap struct {
		file string
		line int
		what string
	}
	var missing []gap
	miss := func(pos *ast.Position, what string) {
		g := gap{file: "?", what: what}
		if pos != nil && pos.Src != nil {
			g.file, g.line = pos.Src.Name, pos.Line
		}
		missing = append(missing, g)
	}
	for _, def := range s.Types {
		if def.BuiltIn || strings.HasPrefix(def.Name, "__") {
			continue
		}
		if !described(def.Description) {
			miss(def.Position, strings.ToLower(string(def.Kind))+" "+def.Name)
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue // __schema, __type and __typename come with the spec
			}
			kind := "field"
			if def.Kind == ast.InputObject {
				kind = "input field"
			}
			if !described(f.Description) {
				miss(f.Position, kind+" "+def.Name+"."+f.Name)
			}
			for _, a := range f.Arguments {
				if !described(a.Description) {
					miss(a.Position, "argument "+def.Name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
		for _, v := range def.EnumValues {
			if !described(v.Description) {
				miss(v.Position, "enum value "+def.Name+"."+v.Name)
			}
		}
	}
	for _, d := range s.Directives {
		if d.Position != nil && d.Position.Src != nil && d.Position.Src.BuiltIn {
			continue
		}
		if !described(d.Description) {
			miss(d.Position, "directive @"+d.Name)
		}
		for _, a := range d.Arguments {
			if !described(a.Description) {
				miss(a.Position, "argument @"+d.Name+"("+a.Name+")")
			}
		}
	}
	if len(missing) > 0 {
		sort.Slice(missing, func(i, j int) bool {
			if missing[i].file != missing[j].file {
				return missing[i].file < missing[j].file
			}
			return missing[i].line < missing[j].line
		})
		lines := make([]string, len(missing))
		for i, g := range missing {
			lines[i] = g.file + ":" + strconv.Itoa(g.line) + ": " + g.what
		}
		t.Errorf("%d schema elements have no description; the playground's docs pane is all a frontend developer reads, so say what they need (units, formats, when null, who may see it, limits):\n  %s",
			len(missing), strings.Join(lines, "\n  "))
	}
}

// TestDeprecationsGiveAReason: a deprecated field, argument, input field or
// enum value stays in the schema until clients have moved, so its reason must
// tell them where to (not the default "No longer supported").
func TestDeprecationsGiveAReason(t *testing.T) {
	s := loadSchema(t)
	var bad []string
	check := func(what string, dirs ast.DirectiveList) {
		d := dirs.ForName("deprecated")
		if d == nil {
			return
		}
		reason := d.Arguments.ForName("reason")
		if reason == nil || reason.Value == nil || strings.TrimSpace(reason.Value.Raw) == "" ||
			reason.Value.Raw == "No longer supported" {
			bad = append(bad, what)
		}
	}
	for _, def := range s.Types {
		if def.BuiltIn {
			continue
		}
		for _, f := range def.Fields {
			check(def.Name+"."+f.Name, f.Directives)
			for _, a := range f.Arguments {
				check(def.Name+"."+f.Name+"("+a.Name+")", a.Directives)
			}
		}
		for _, v := range def.EnumValues {
			check(def.Name+"."+v.Name, v.Directives)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("@deprecated without a reason that says what to use instead: %s", strings.Join(bad, ", "))
	}
}

// TestSchemaSnapshot compares the printed schema with the committed
// docs/schema.graphql. The snapshot exists for review: any change to the
// schema, breaking or not, shows up as a diff of that one file in the pull
// request, sorted by type name, independent of which .graphqls file moved.
func TestSchemaSnapshot(t *testing.T) {
	got := printSchema(loadSchema(t))
	if again := printSchema(loadSchema(t)); again != got {
		t.Fatal("printing the schema twice gave two texts; the snapshot would not be stable")
	}
	if *update {
		if err := os.WriteFile(snapshotPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", snapshotPath)
		return
	}
	want, err := os.ReadFile(snapshotPath)
	if err != nil {
		t.Fatalf("read the snapshot: %v; create it with `go test ./schema -run Snapshot -update`", err)
	}
	if string(want) != got {
		t.Errorf("the schema differs from the committed snapshot docs/schema.graphql (first difference: %s).\n"+
			"If the change is intended, run `go test ./schema -run Snapshot -update` and commit docs/schema.graphql with it: "+
			"its diff is what reviewers read to see what changes for clients (removed or retyped fields break them; deprecate with @deprecated(reason: ...) instead).",
			firstDifference(string(want), got, "snapshot", "schema"))
	}
}

// firstDifference names the first line where two printed schemas part, so
// the failure points somewhere without a diff tool.
func firstDifference(want, got, wantName, gotName string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ": " + wantName + " " + strconv.Quote(w) + ", " + gotName + " " + strconv.Quote(g)
		}
	}
	return "none"
}

// TestSnapshotIsWhatTheGatewayServes: the generated executable schema (what
// /schema.graphql and introspection answer) prints to the same text as
// schema/*.graphqls, so the snapshot is the served schema and generated code
// that lags behind a schema edit shows up here too.
func TestSnapshotIsWhatTheGatewayServes(t *testing.T) {
	served := printSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	if files := printSchema(loadSchema(t)); served != files {
		t.Errorf("graph/generated.go does not match schema/*.graphqls (first difference: %s); run `go generate ./...`",
			firstDifference(files, served, "schema/*.graphqls", "graph/generated.go"))
	}
}
