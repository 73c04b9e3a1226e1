// Package schema is the GraphQL schema of the gateway: one .graphqls file per
// domain, read by gqlgen (`go generate ./...`) into graph/. The package has no
// code of its own; its tests keep the schema documented (every type, field,
// argument and enum value carries a description the playground's docs pane
// shows) and make every change to it visible in review through the committed
// snapshot docs/schema.graphql.
package schema
