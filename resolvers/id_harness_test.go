package resolvers

// Helpers of the identity and KYC resolver tests (id_*_test.go,
// kyc_*_test.go): what those tests ask of the harness beyond
// harness_test.go, and what their fakes share.

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/fingraph/fingraph/session"
)

// refused fails the test unless the response's one error has code and,
// when field is not "", names field in extensions.field.
func refused(t *testing.T, resp *response, code, field string) gqlError {
	t.Helper()
	e := resp.only(t)
	if e.Code() != code {
		t.Fatalf("code %s, want %s: %s", e.Code(), code, resp)
	}
	if field != "" && e.Extensions["field"] != field {
		t.Fatalf("extensions.field %v, want %s: %s", e.Extensions["field"], field, resp)
	}
	return e
}

// wantFieldError is refused with a BAD_USER_INPUT naming field, which
// must also carry a message.
func wantFieldError(t *testing.T, resp *response, field string) gqlError {
	t.Helper()
	e := refused(t, resp, "BAD_USER_INPUT", field)
	if e.Message == "" {
		t.Fatalf("BAD_USER_INPUT on %s without a message: %s", field, resp)
	}
	return e
}

// upstreamCalls is how many calls both fake upstreams got.
func (h *harness) upstreamCalls() int { return h.payments.total() + h.banking.total() }

// noUpstreamCall fails the test when the fakes got any call since before
// (a count from upstreamCalls).
func (h *harness) noUpstreamCall(t *testing.T, before int, what string) {
	t.Helper()
	if n := h.upstreamCalls() - before; n != 0 {
		t.Fatalf("%s made %d upstream calls, want none", what, n)
	}
}

// fakeAuthority records the ends of authority resolvers announce
// (Resolver.Authority), one line per call: "revoke person:p-1
// password_changed keep=sid-1", "proof apikeys:corp blocked", ...
type fakeAuthority struct {
	mu    sync.Mutex
	calls []string
	// fail makes every call answer it.
	fail error
}

var _ Authority = (*fakeAuthority)(nil)

func (a *fakeAuthority) record(s string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, s)
	return a.fail
}

func (a *fakeAuthority) Revoke(_ context.Context, grant string, why session.Reason, keep string) error {
	return a.record("revoke " + grant + " " + string(why) + " keep=" + keep)
}

func (a *fakeAuthority) RequireProof(_ context.Context, grant string, why session.Reason) error {
	return a.record("proof " + grant + " " + string(why))
}

func (a *fakeAuthority) Announce(_ context.Context, grant string, why session.Reason) error {
	return a.record("announce " + grant + " " + string(why))
}

func (a *fakeAuthority) Withdraw(_ context.Context, grant string) error {
	return a.record("withdraw " + grant)
}

// recorded is what was called, in order.
func (a *fakeAuthority) recorded() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// withAuthority gives h's resolvers a recording Authority (before the
// first exec).
func (h *harness) withAuthority() *fakeAuthority {
	a := &fakeAuthority{}
	h.r.Authority = a
	return a
}

// rawRoles are role ids as the banking upstream lists them.
func rawRoles(ids []string) []json.RawMessage {
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		out[i], _ = json.Marshal(id)
	}
	return out
}

// announced is each published event as "Name corporation",
// e.g. "PersonBlocked corp-demo", in order.
func (f *fakeEvents) announced(t *testing.T) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.published))
	for i, e := range f.published {
		var p struct {
			Corporation string `json:"corporation_id"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out[i] = e.Name + " " + p.Corporation
	}
	return out
}
