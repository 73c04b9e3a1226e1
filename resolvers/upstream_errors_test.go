package resolvers

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// An upstream error reaches the client as the GraphQL error code the edge
// maps it to, with extensions.upstream (service, status, the spec's code,
// its name, the field) for a refusal; what is not the client's to see (an
// unexpected error's text) is logged, never shown.
func TestUpstreamErrorsMapToGraphQLCodes(t *testing.T) {
	query := `query($id: ID!) { person(id: $id) { firstName } }`
	vars := map[string]any{"id": relay.ID(relay.Person, demoPerson)}
	for _, tc := range []struct {
		name     string
		err      error
		want     string
		upstream map[string]any
	}{
		{"refusal with a spec code", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "id", "invalid value"),
			"UPSTREAM_REJECTED", map[string]any{"service": "banking", "status": 400.0, "code": 10001.0, "name": "INVALID_VALUE", "field": "id"}},
		{"forbidden", bankingRejection(http.StatusForbidden, 0, "", "not yours"), "FORBIDDEN",
			map[string]any{"service": "banking", "status": 403.0}},
		{"rate limited", bankingRejection(http.StatusTooManyRequests, 0, "", "slow down"), "RATE_LIMITED",
			map[string]any{"service": "banking", "status": 429.0}},
		{"server error", bankingRejection(http.StatusBadGateway, 0, "", "bad gateway"), "UPSTREAM_UNAVAILABLE", nil},
		{"no answer", unavailable("banking"), "UPSTREAM_UNAVAILABLE", nil},
		{"unexpected", errors.New("decoding person: unexpected token near secret-detail"), "INTERNAL", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.banking.persons.failNext("Get", tc.err)
			e := h.as(staff).exec(query, vars).only(t)
			if e.Code() != tc.want {
				t.Fatalf("code %s, want %s: %+v", e.Code(), tc.want, e)
			}
			if got := e.Upstream(); !sameUpstream(got, tc.upstream) {
				t.Fatalf("extensions.upstream %v, want %v", got, tc.upstream)
			}
			if strings.Contains(e.Message, "secret-detail") {
				t.Fatalf("an internal error's text reached the client: %q", e.Message)
			}
			if tc.want == "INTERNAL" && !h.logged("secret-detail") {
				t.Fatal("an internal error's cause was not logged")
			}
			if h.banking.persons.calls("Get") != 1 {
				t.Fatalf("%d reads of the person, want 1", h.banking.persons.calls("Get"))
			}
		})
	}

	// A 404 is no error: person(id) answers null, as for an id that is
	// not there.
	h := newHarness(t)
	h.banking.persons.failNext("Get", bankingNotFound())
	var got struct{ Person *struct{ FirstName string } }
	h.as(staff).exec(query, vars).decode(t, &got)
	if got.Person != nil {
		t.Fatalf("a person the upstream does not have: %+v, want null", got.Person)
	}
}

// A conversion the upstream refuses for an expected reason (funds, limits)
// is a typed result the client switches on, not an error.
func TestConversionRefusalIsATypedResult(t *testing.T) {
	h := newHarness(t)
	h.banking.transactions.failNext("CreateConversion", bankingRejection(http.StatusBadRequest, banking.CodeInsufficientFunds, "amount", "insufficient funds"))
	var got struct {
		CreateConversion struct {
			Typename string `json:"__typename"`
			Reason   string
			Code     int
			Name     string
		} `json:"createConversion"`
	}
	h.as(person).exec(conversionMutation, conversionVars(500, "USD", nil)).decode(t, &got)
	c := got.CreateConversion
	if c.Typename != "ConversionRefused" || c.Reason != "INSUFFICIENT_FUNDS" || c.Code != banking.CodeInsufficientFunds || c.Name != "INSUFFICIENT_FUNDS" {
		t.Fatalf("got %+v, want ConversionRefused INSUFFICIENT_FUNDS 20002", c)
	}
	if len(h.events.names()) != 0 {
		t.Fatalf("a refused conversion announced %v", h.events.names())
	}
}

// sameUpstream compares extensions.upstream as JSON decoded it.
func sameUpstream(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
