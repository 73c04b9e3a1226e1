package schema

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// payloadExceptions are the mutations whose answer carries no Node, each
// with why a normalized client cache (Apollo's InMemoryCache, urql's
// graphcache, Relay's store) needs none: they change nothing a query shows
// as an object with an id, or what they change is the session itself.
var payloadExceptions = map[string]string{
	"noop": "the schema's placeholder root field; changes nothing",
	// The session is no object of the graph: a client starts (or drops)
	// its cache with the session.
	"signIn":          "starts a session (a token), not a Node",
	"signInCustomer":  "starts a customer session (a token), not a Node",
	"signOut":         "ends the caller's session",
	"forgotPassword":  "sends a recovery code; nothing a query shows changes",
	"recoverPassword": "sets a password, which no query shows",
	// Nothing a query shows changes.
	"revealCardCredentials":      "reads a card's credentials once; the card does not change, and credentials must never be cached",
	"requestStatement":           "makes a download link; nothing in the graph changes",
	"requestIntroducerFeeReport": "makes a download link; nothing in the graph changes",
	"sendFeedback":               "sends a message to the operator; nothing in the graph changes",
	// Answered by id, in a shape that cannot change additively.
	"signUpCorporation": "answers the new corporation's id; the anonymous caller may not read the corporation until it signs in",
	"deleteApiKey":      "answers Boolean! since its first version (changing the type is not additive); the client removes the key it named by id",
}

// TestEveryMutationAnswersTheNodesItChanges: a mutation's answer carries
// what it changed as an object with its id (a Node, or any object with an
// id: ID!, which is what a normalized cache keys on) on its own, in a field
// of its payload or in a member of its union result; a delete mutation
// answers the deleted object's id. A mutation added without either fails
// here until it carries one or is listed in payloadExceptions with its
// reason.
func TestEveryMutationAnswersTheNodesItChanges(t *testing.T) {
	s := loadSchema(t)
	var missing []string
	for _, f := range s.Mutation.Fields {
		if _, ok := payloadExceptions[f.Name]; ok {
			continue
		}
		if carriesEntity(s, f.Type, 1) {
			continue
		}
		if strings.HasPrefix(f.Name, "delete") && answersID(s, f.Type) {
			continue // a deleted Node answered by id
		}
		missing = append(missing, f.Name)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("mutations whose answer carries nothing a cache can key: %v; answer the Nodes they change in their payloads, or list an exception with its reason", missing)
	}
	for name := range payloadExceptions {
		if s.Mutation.Fields.ForName(name) == nil {
			t.Errorf("payloadExceptions names %s, which is no mutation", name)
		}
	}
}

// TestPayloadsCarryTheCustomer: the two customer mutations whose answers
// once left the customer out answer it now (the rule above is met by their
// other fields, so it is checked by name).
func TestPayloadsCarryTheCustomer(t *testing.T) {
	s := loadSchema(t)
	for _, name := range []string{"UpdateCustomerContactPayload", "AddPaymentMethodPayload"} {
		f := s.Types[name].Fields.ForName("customer")
		if f == nil || f.Type.String() != "Customer!" {
			t.Errorf("%s.customer: %v, want Customer!", name, f)
		}
	}
}

// carriesEntity reports whether a value of type t is an entity (a Node, or
// an object other than a payload with an id: ID!), or holds one within
// depth levels of fields.
func carriesEntity(s *ast.Schema, t *ast.Type, depth int) bool {
	for t.Elem != nil {
		t = t.Elem
	}
	def := s.Types[t.NamedType]
	if def == nil {
		return false
	}
	switch def.Kind {
	case ast.Object:
		if slices.Contains(def.Interfaces, "Node") {
			return true
		}
		if id := def.Fields.ForName("id"); id != nil && id.Type.String() == "ID!" && !strings.HasSuffix(def.Name, "Payload") {
			return true
		}
		if depth == 0 {
			return false
		}
		for _, f := range def.Fields {
			if carriesEntity(s, f.Type, depth-1) {
				return true
			}
		}
	case ast.Union:
		for _, m := range def.Types {
			if carriesEntity(s, &ast.Type{NamedType: m}, depth) {
				return true
			}
		}
	case ast.Interface:
		for _, d := range s.GetPossibleTypes(def) {
			if carriesEntity(s, &ast.Type{NamedType: d.Name}, depth) {
				return true
			}
		}
	}
	return false
}

// answersID reports whether the object t has a field of type ID!: the id of
// what a delete mutation removed.
func answersID(s *ast.Schema, t *ast.Type) bool {
	def := s.Types[t.Name()]
	if def == nil || def.Kind != ast.Object {
		return false
	}
	return slices.ContainsFunc(def.Fields, func(f *ast.FieldDefinition) bool { return f.Type.String() == "ID!" })
}
