package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// persistedQueryCheck vets the persisted-query extension before the trusted
// documents and gqlgen's automatic persisted queries read it. gqlgen answers
// a malformed one (a hash that is not a string, a version other than 1, a
// hash that is not the query's) with an error without a code, which the
// error presenter had to take for the gateway's own failure: INTERNAL, and
// logged at ERROR for every anonymous client that sent one. Here they are
// the client's mistake, with a code; a well-formed hash the cache does not
// know stays PERSISTED_QUERY_NOT_FOUND, on which clients resend the text.
type persistedQueryCheck struct{}

var (
	_ graphql.HandlerExtension          = persistedQueryCheck{}
	_ graphql.OperationParameterMutator = persistedQueryCheck{}
)

// ExtensionName implements graphql.HandlerExtension.
func (persistedQueryCheck) ExtensionName() string { return "PersistedQueryCheck" }

// Validate implements graphql.HandlerExtension.
func (persistedQueryCheck) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator.
func (persistedQueryCheck) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	raw, present := p.Extensions["persistedQuery"]
	if !present || raw == nil {
		return nil
	}
	pq, ok := raw.(map[string]any)
	if !ok {
		return badPersistedQuery("extensions.persistedQuery must be an object with version and sha256Hash")
	}
	if !versionOne(pq["version"]) {
		return badPersistedQuery("extensions.persistedQuery.version must be 1")
	}
	hash, ok := pq["sha256Hash"].(string)
	if b, err := hex.DecodeString(hash); !ok || err != nil || len(b) != sha256.Size {
		return badPersistedQuery("extensions.persistedQuery.sha256Hash must be 64 hexadecimal digits")
	}
	if p.Query != "" {
		if sum := sha256.Sum256([]byte(p.Query)); hex.EncodeToString(sum[:]) != hash {
			return badPersistedQuery("extensions.persistedQuery.sha256Hash is not the SHA-256 of the query")
		}
	}
	return nil
}

// versionOne: HTTP bodies are decoded with exact numbers (json.Number),
// websocket messages by gqlgen with float64.
func versionOne(v any) bool {
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		return err == nil && n == 1
	case float64:
		return v == 1
	}
	return false
}

func badPersistedQuery(msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{
		"code": string(gqlerr.BadUserInput), "reason": "PERSISTED_QUERY_INVALID"}}
}
