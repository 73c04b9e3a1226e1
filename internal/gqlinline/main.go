// Command gqlinline rewrites gqlgen's generated executor where gqlgen has
// no option for what the gateway needs, each anchored on the exact shape
// gqlgen generates:
//
//   - list marshalling, so that the elements of a list are marshalled one
//     after another on the calling goroutine wherever that cannot hold up a
//     resolver's I/O (below);
//   - plain leaves, struct-field scalars and global ids, whose field function
//     then calls its marshaller directly (leaves.go);
//   - each object's field set, written without gqlgen's per-object map
//     (graph/inline.go, writeFields);
//   - the non-null marshallers of context scalars, whose null gqlgen's
//     wrapper hid from the parent's non-null check (nulls.go), and the
//     in-range values of the model's scalars, which skip ResolveField
//     (leaves.go, guarded leaves);
//   - a field's arguments, worked out once per place in an operation
//     instead of once per object of a list (args.go).
//
// gqlgen marshals every list of two or more elements with
// graphql.MarshalSliceConcurrently: one goroutine per element, each growing
// its own stack, even when the element's fields only read struct fields.
// gqlgen has no option to turn that off, so `go generate` runs this after
// `gqlgen generate`:
//
//	go run ./internal/gqlinline graph/generated.go graph/inline_gen.go
//
// It reads the generated executor, works out for every object type which of
// its fields may wait on I/O (a field gqlgen runs concurrently, that is one
// with a resolver or a directive, or a field whose value is an object with
// such a field), rewrites each list marshaller's call of
// MarshalSliceConcurrently into a call of the package's marshalSliceInline,
// and writes the table of those fields (inline_gen.go). At run time
// marshalSliceInline looks at the list's selection: when it selects none of
// those fields the elements run inline, otherwise the list goes to gqlgen's
// concurrent marshalling as before, so that the elements' resolvers still
// queue their loads in one loader window. A batch resolver (gqlgen's
// `batch: true`) resolves once for all the elements, so it does not by itself
// keep a list concurrent.
//
// The rewrite is anchored on the exact shape gqlgen generates; when it finds
// none of one of these shapes, or a call it cannot
// account for, it fails, so a gqlgen upgrade that changes the shape fails `go generate`
// instead of silently dropping the rewrite.
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
