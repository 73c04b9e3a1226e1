package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// TrustedDocuments accepts only the operations of a registered list, for
// production frontends whose every operation is known at build time: a
// client sends a document's id (the persisted-query extension's sha256Hash,
// as Apollo and Relay clients do) or a document text that is on the list;
// anything else is refused before it is parsed. An attacker then cannot
// make the gateway validate or run a document the frontends do not use.
type TrustedDocuments struct {
	byHash map[string]string
}

var (
	_ graphql.HandlerExtension          = (*TrustedDocuments)(nil)
	_ graphql.OperationParameterMutator = (*TrustedDocuments)(nil)
)

// LoadTrustedDocuments reads a manifest: Apollo's persisted query manifest
// ({"operations": [{"id", "body"}, ...]}) or Relay's ({"<id>": "<text>"}).
// Each id must be the SHA-256 of its text, so that a client may send either.
func LoadTrustedDocuments(path string) (*TrustedDocuments, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var apollo struct {
		Operations []struct {
			ID   string `json:"id"`
			Body string `json:"body"`
		} `json:"operations"`
	}
	docs := map[string]string{}
	if err := json.Unmarshal(raw, &apollo); err == nil && apollo.Operations != nil {
		for _, op := range apollo.Operations {
			docs[op.ID] = op.Body
		}
	} else if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, errors.New("not an Apollo persisted query manifest nor a Relay map of id to text")
	}
	t := &TrustedDocuments{byHash: make(map[string]string, len(docs))}
	for id, body := range docs {
		if sum := sha256.Sum256([]byte(body)); hex.EncodeToString(sum[:]) != id {
			return nil, fmt.Errorf("the id %.16s… is not the SHA-256 of its document", id)
		}
		t.byHash[id] = body
	}
	if len(t.byHash) == 0 {
		return nil, errors.New("the manifest lists no operation")
	}
	return t, nil
}

// Len is the number of trusted documents.
func (t *TrustedDocuments) Len() int { return len(t.byHash) }

// ExtensionName implements graphql.HandlerExtension.
func (*TrustedDocuments) ExtensionName() string { return "TrustedDocuments" }

// Validate implements graphql.HandlerExtension.
func (*TrustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters implements graphql.OperationParameterMutator:
// it fills in a trusted document named by its hash, and refuses any other.
func (t *TrustedDocuments) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query != "" {
		sum := sha256.Sum256([]byte(p.Query))
		if _, ok := t.byHash[hex.EncodeToString(sum[:])]; ok {
			return nil
		}
		return untrusted()
	}
	pq, _ := p.Extensions["persistedQuery"].(map[string]any)
	hash, _ := pq["sha256Hash"].(string)
	body, ok := t.byHash[hash]
	if !ok {
		return untrusted()
	}
	p.Query = body
	return nil
}

func untrusted() *gqlerror.Error {
	return &gqlerror.Error{Message: "this gateway runs only its registered operations",
		Extensions: map[string]any{"code": string(gqlerr.BadUserInput), "reason": "UNTRUSTED_DOCUMENT"}}
}
