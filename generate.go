package main

// The GraphQL schema is the source of truth: regenerate graph/ and the
// resolver stubs after any change under schema/.
//go:generate go tool gqlgen generate
