package resolvers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/upstream/banking"
)

// A transport that must refuse a request before reading the rest of it (an
// upload's files) asks the policy about the whole operation: every root
// field's role, through fragments, with the error the directive would
// give the first field refused.
func TestAllowsOperationChecksEveryRootField(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: h.r, Directives: h.policy.Directives()}).Schema()
	upload := `mutation($f: Upload!) { uploadKycDocument(input: {file: $f}) { id } }`
	key := `createApiKey(input: {corporationId: "c", name: "n"}) { id }`
	deep := "noop"
	for range maxFragmentNesting + 1 {
		deep = "... on Mutation { " + deep + " }"
	}
	for _, tc := range []struct {
		name  string
		query string
		who   principal
		want  gqlerr.Code
	}{
		{"an upload by a person", upload, person, ""},
		{"an upload by a customer", upload, customer, gqlerr.Forbidden},
		{"an upload signed out", upload, anonymous, gqlerr.Unauthenticated},
		{"a staff field beside an open one", `mutation { noop ` + key + ` }`, person, gqlerr.Forbidden},
		{"a staff field by staff", `mutation { noop ` + key + ` }`, staff, ""},
		{"a staff field in a fragment", `mutation { ...M } fragment M on Mutation { ` + key + ` }`, apiClient, gqlerr.Forbidden},
		{"a staff field in an inline fragment", `mutation { ... on Mutation { ` + key + ` } }`, introducer, gqlerr.Forbidden},
		{"open fields signed out", `mutation { noop signOut }`, anonymous, ""},
		{"fragments nested too deep", `mutation { ` + deep + ` }`, staff, gqlerr.BadUserInput},
	} {
		doc, errs := gqlparser.LoadQueryWithRules(schema, tc.query, nil) // the default rules
		if errs != nil {
			t.Fatalf("%s: %v", tc.name, errs)
		}
		h.as(tc.who).inSession(func(ctx context.Context) {
			err := h.policy.AllowsOperation(ctx, doc.Operations[0])
			var code gqlerr.Code
			if e, ok := gqlerr.As(err); ok {
				code = e.Code
			} else if err != nil {
				t.Fatalf("%s: %v is no client error", tc.name, err)
			}
			if code != tc.want {
				t.Fatalf("%s: %v, want %q", tc.name, err, tc.want)
			}
		})
	}
	// A role the policy does not know admits nobody.
	h.as(staff).inSession(func(ctx context.Context) {
		if e, ok := gqlerr.As(h.policy.Allows(ctx, model.Role("NOPE"))); !ok || e.Code != gqlerr.Forbidden {
			t.Fatalf("an unknown role: %v, want FORBIDDEN", e)
		}
	})
}

// What counts as a failed sign-in is a refusal of the credentials; an
// answer that judged none (an outage, the upstream's own limit, the
// gateway's checks, a caller that left) never locks anyone out.
func TestOnlyRefusedCredentialsAreFailedSignIns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"success", nil, false},
		{"wrong password", bankingRejection(http.StatusUnauthorized, banking.CodeInvalidValue, "password", "wrong"), true},
		{"wrong code", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "code", "invalid code"), true},
		{"a customer key refused", gqlerr.Unauthenticatedf("the customer key was not accepted"), true},
		{"upstream limit", bankingRejection(http.StatusTooManyRequests, 0, "", "slow down"), false},
		{"upstream failure", bankingRejection(http.StatusBadGateway, 0, "", "bad gateway"), false},
		{"no answer", unavailable("banking"), false},
		{"caller left", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, false},
		{"bad input", gqlerr.BadInput("input.email", "input.email is required"), false},
		{"gateway failure", gqlerr.InternalError(errors.New("boom")), false},
		{"gateway limit", rateLimitedError("slow down", 0), false},
		{"anything else", errors.New("decoding failed"), false},
	} {
		if got := failedAttempt(tc.err); got != tc.want {
			t.Errorf("%s: failed attempt %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A change is held for its current password when the upstream refused that
// password, however it says so; no other refusal counts.
func TestWrongCurrentPasswordIsTheUpstreamsRefusalOfIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"none", nil, false},
		{"on current_password", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "current_password", "wrong"), true},
		{"named in the message", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "", "Current password is wrong"), true},
		{"field named in the message", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "", "current_password: invalid"), true},
		{"on another field", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "phone", "invalid phone"), false},
		{"the gateway's, on the field", &gqlerr.Error{Code: gqlerr.UpstreamRejected, Field: "input.currentPassword", Message: "no"}, true},
		{"the gateway's, in words", gqlerr.Forbiddenf("the current password is wrong"), true},
		{"the gateway's, another", gqlerr.Forbiddenf("not yours"), false},
		{"no answer", unavailable("banking"), false},
	} {
		if got := wrongCurrentPassword(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// With the limits shared (ShareLimits), replicas allow together what one
// allows: failed sign-ins on one count on the other.
func TestSharedLimitsHoldAcrossReplicas(t *testing.T) {
	t.Parallel()
	e, err := engine.Open(t.Context(), engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	kv, err := e.KeyValue(t.Context(), ratelimit.Bucket, ratelimit.BucketTTL)
	if err != nil {
		t.Fatal(err)
	}
	one, two := newHarness(t), newHarness(t)
	one.policy.ShareLimits(kv)
	two.policy.ShareLimits(kv)
	wrong := signInVars("PERSON", "anna@demo.test")
	wrong["in"].(map[string]any)["password"] = "wrong-password"
	for i := range pairBurst {
		h := []*harness{one, two}[i%2]
		refused(t, h.as(anonymous).exec(signInFull, wrong), "UNAUTHENTICATED", "")
	}
	for _, h := range []*harness{one, two} {
		before := h.upstreamCalls()
		resp := h.as(anonymous).exec(signInFull, signInVars("PERSON", "anna@demo.test"))
		if e := refused(t, resp, "RATE_LIMITED", ""); !strings.Contains(e.Message, "this account") {
			t.Fatalf("limited for %q", e.Message)
		}
		h.noUpstreamCall(t, before, "a limited sign-in")
	}
}
