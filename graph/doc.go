// Package graph is gqlgen's generated executable schema (generated.go) and
// the models it uses (model/). Nothing here is written by hand except this
// file and inline.go (what internal/gqlinline's rewrite of generated.go
// calls, with its table inline_gen.go): change schema/*.graphqls and run
// `go generate ./...`. The HTTP edge
// around the schema (transports, limits, errors, websockets) is gqlhttp.
package graph
