// Command gqlinline rewrites gqlgen's generated executor where gqlgen has
// no option for what the gateway needs. `go generate` runs it after
// `gqlgen generate`:
//
//	go run ./internal/gqlinline [-skip rewrites] graph/generated.go graph/inline_gen.go
//
// Each rewrite is anchored on the exact shape gqlgen generates, and each is
// kept because it pays: left out alone (-skip, below), it costs at least
// ~5% of one BenchmarkGatewayCost case's allocations or bytes per request.
// The figures are allocations per request without the rewrite, then with
// every rewrite (README query; side-by-side query; corporation dashboard,
// whose count moves by about ten from run to run):
//
//   - lists: list marshalling, so that the elements of a list are
//     marshalled one after another on the calling goroutine wherever that
//     cannot hold up a resolver's I/O (below; graph/inline.go,
//     marshalSliceInline). 924 → 865; 1,182 → 1,123; 1,256 → 1,235; and
//     18 goroutines per query → 0, which is most of what it pays: the
//     README and side-by-side queries take 40-70% more CPU without it.
//   - deferred: an object's group for @defer'd fields, built only when one
//     of its fields is deferred (graph/inline.go, newDeferredGroup).
//     998 → 865; 1,373 → 1,123; 1,309 → 1,235.
//   - fields: each object's field set written without gqlgen's map of the
//     aliases written (graph/inline.go, writeFields). 993 → 865; 1,342 →
//     1,123; 1,303 → 1,235.
//   - leaves: plain leaves, struct-field scalars and global ids, whose
//     field function then calls its marshaller directly (leaves.go).
//     1,137 → 865; 1,603 → 1,123; 1,351 → 1,235.
//   - guarded: the in-range values of the model's context scalars
//     (MinorUnits, Int) answered without ResolveField (leaves.go).
//     865 → 865; 1,227 → 1,123; 1,232 → 1,235 (noise).
//   - args: a field's arguments worked out once per place in an operation
//     instead of once per object of a list (args.go). 876 → 865; 1,189 →
//     1,123 (and 103.5 → 99.1 KB); 1,229 → 1,235 (noise).
//   - nulls: the non-null marshallers of context scalars return a null as
//     graphql.Null, which gqlgen's wrapper hid from the parent's non-null
//     check (nulls.go). A correctness fix, not a speed-up: it costs and
//     saves nothing.
//
// With none of them: 1,467; 2,300; 1,512 allocations (115, 158 and 125 KB).
// docs/performance.md ("What each gqlinline rewrite pays") has the bytes.
//
// Measured and dropped, their CPU effect inside the noise (±5%):
//
//   - enums: enum values written from a table instead of through fmt; at
//     most 4% of a case's allocations, none on the README query.
//   - buffers: an answer's buffer started at the operation's last answer's
//     size; at most 0.6% of allocations, its bytes gain the pre-sized buffer
//     alone.
//   - objects: object fields that are struct fields resolved without
//     ResolveField; 5.6% of one case's allocations, at most 2% of the
//     others', and it bypassed gqlgen's field middleware, a trap for the
//     next extension that intercepts fields.
//
// Left out together they cost 24, 103 and ~13 allocations per request (842
// → 866; 1,021 → 1,124; ~1,224 → ~1,237) and 2, 7 and ~4 KB, with no CPU
// difference measurable on this machine. The leaves and guarded rewrites
// bypass the field middleware too, for scalars only, which no middleware of
// the gateway reads (leaves.go): an extension that must see every scalar
// field needs them left out.
//
// # Lists
//
// gqlgen marshals every list of two or more elements with
// graphql.MarshalSliceConcurrently: one goroutine per element, each growing
// its own stack, even when the element's fields only read struct fields.
// gqlgen has no option to turn that off. This command reads the generated
// executor, works out for every object type which of its fields may wait on
// I/O (a field gqlgen runs concurrently, that is one with a resolver or a
// directive, or a field whose value is an object with such a field),
// rewrites each list marshaller's call of MarshalSliceConcurrently into a
// call of the package's marshalSliceInline, and writes the table of those
// fields (inline_gen.go). At run time marshalSliceInline looks at the
// list's selection: when it selects none of those fields the elements run
// inline, otherwise the list goes to gqlgen's concurrent marshalling as
// before, so that the elements' resolvers still queue their loads in one
// loader window. A batch resolver (gqlgen's `batch: true`) resolves once
// for all the elements, so it does not by itself keep a list concurrent.
//
// # Upgrading gqlgen
//
// The gqlgen version is the one go.mod requires, which is also the `go tool
// gqlgen` that generates. An upgrade is regenerating: `go generate ./...`
// (gqlgen, then this command), and `go test ./schema -run Snapshot -update`
// if the schema's output moved. Nothing else is needed while the shapes
// hold.
//
// This command fails loudly on a shape it does not know: when it finds none
// of a rewrite's shapes (no list marshaller, plain leaf, deferred group,
// field set, arguments call or context-scalar marshaller of gqlgen's form),
// or a call of MarshalSliceConcurrently or NewDeferredGroup of another form,
// `go generate` fails and names the shape instead of leaving the rewrite out
// silently. TestPinnedGqlgenGeneratesTheRewrittenShape runs Rewrite on the
// executor of gqlgen's own test server at the version go.mod pins, so an
// upgrade that changes a shape fails there too, and TestGeneratedIsRewritten
// fails while graph/generated.go is not what this command writes. Where a
// shape changed, move the rewrite's anchor (its file says what it relies
// on) or drop the rewrite.
//
// Then re-measure each rewrite: build BenchmarkGatewayCost without it, from
// gqlgen's own output, and compare it with the build with every rewrite
// (allocations and bytes per request are exact; CPU needs interleaved
// rounds on a shared machine). -skip takes the names above, comma-separated:
//
//	go tool gqlgen generate
//	go run ./internal/gqlinline -skip leaves graph/generated.go graph/inline_gen.go
//	go test -c -o /tmp/skip-leaves.test ./app
//	go generate ./...   # back to every rewrite
//	cd app && /tmp/skip-leaves.test -test.run '^$' -test.benchtime 2000x -test.benchmem \
//		-test.bench 'GatewayCost/(readme-query|side-by-side-query|corporation-dashboard)$'
//
// Drop a rewrite when gqlgen gained the option it stands in for (a list's
// elements marshalled on the calling goroutine, a deferred group made only
// for deferred fields, a field set without its map, a leaf's marshaller
// called without ResolveField, arguments kept per operation, a context
// marshaller's null left visible to its parent), or when it no longer pays
// ~5% of one case's allocations or bytes: remove its file or its part of
// rewrite.go, its helper in graph/inline.go and its tests, then regenerate.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	// -skip leaves out the named rewrites (comma-separated: lists,
	// deferred, fields, nulls, leaves, guarded, args), to measure what
	// each one pays (docs/performance.md).
	skip := flag.String("skip", "", "rewrites to leave out, comma-separated")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: gqlinline [-skip rewrites] <generated.go> <inline_gen.go>")
		os.Exit(2)
	}
	src, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlinline:", err)
		os.Exit(1)
	}
	var skipped []string
	if *skip != "" {
		skipped = strings.Split(*skip, ",")
	}
	out, table, err := Rewrite(src, skipped...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlinline:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(flag.Arg(0), out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gqlinline:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(flag.Arg(1), table, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gqlinline:", err)
		os.Exit(1)
	}
}
