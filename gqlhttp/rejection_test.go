package gqlhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// rejected is a client's typed refusal as the presenter sees it.
type rejected roundtrip.Rejection

func (r rejected) Error() string                  { return "refused" }
func (r rejected) Rejection() roundtrip.Rejection { return roundtrip.Rejection(r) }

func present(t *testing.T, err error) (*gqlerror.Error, string) {
	t.Helper()
	var logs bytes.Buffer
	g := &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{}}
	presentCause(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), g, err)
	return g, logs.String()
}

func TestOnePresenterForBothUpstreams(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rj       roundtrip.Rejection
		code     gqlerr.Code
		message  string
		upstream map[string]any // nil: none shown
		logged   string
	}{
		{"banking validation", roundtrip.Rejection{Service: "banking", Status: 400, Code: 10001, Name: "INVALID_VALUE", Field: "email", Message: "invalid"},
			gqlerr.UpstreamRejected, "invalid", map[string]any{"service": "banking", "status": 400, "code": 10001, "name": "INVALID_VALUE", "field": "email"}, ""},
		{"payments rejection", roundtrip.Rejection{Service: "payments", Status: 409, Code: "webhook_exists", Message: "exists"},
			gqlerr.UpstreamRejected, "exists", map[string]any{"service": "payments", "status": 409, "code": "webhook_exists"}, ""},
		{"not found", roundtrip.Rejection{Service: "banking", Status: 404}, gqlerr.NotFound, "the banking service refused the request", map[string]any{"service": "banking", "status": 404}, ""},
		{"forbidden", roundtrip.Rejection{Service: "payments", Status: 403, Code: "forbidden_key", Message: "no"}, gqlerr.Forbidden, "no", map[string]any{"service": "payments", "status": 403, "code": "forbidden_key"}, ""},
		{"failed sign-in", roundtrip.Rejection{Service: "banking", Status: 401, Field: "password", Message: "invalid e-mail or password"},
			gqlerr.Unauthenticated, "invalid e-mail or password", map[string]any{"service": "banking", "status": 401, "field": "password"}, ""},
		{"refused session credential", roundtrip.Rejection{Service: "banking", Status: 401, Message: "access token is invalid", CredentialRefused: true},
			gqlerr.Unauthenticated, "the session has ended; sign in again", map[string]any{"service": "banking", "status": 401}, ""},
		{"rate limited", roundtrip.Rejection{Service: "payments", Status: 429, Code: "slow_down"}, gqlerr.RateLimited, "the payments service refused the request", map[string]any{"service": "payments", "status": 429, "code": "slow_down"}, ""},
		{"server error", roundtrip.Rejection{Service: "payments", Status: 503, Code: "injected_fault", Message: "fault injected"},
			gqlerr.UpstreamUnavailable, "the payments service is unavailable; try again shortly", nil, "payments server error"},
		{"redirect", roundtrip.Rejection{Service: "banking", Status: 307},
			gqlerr.UpstreamUnavailable, "the banking service is unavailable; try again shortly", nil, "banking answered with neither success nor refusal"},
		{"gateway misconfigured", roundtrip.Rejection{Service: "banking", Status: 400, Code: 21001, Misconfigured: "banking refuses the configured API version"},
			gqlerr.Internal, "internal error", nil, "banking refuses the configured API version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, logs := present(t, fmt.Errorf("resolver: %w", rejected(tc.rj)))
			if g.Extensions["code"] != string(tc.code) || g.Message != tc.message {
				t.Errorf("code %v, message %q; want %s, %q", g.Extensions["code"], g.Message, tc.code, tc.message)
			}
			got, _ := g.Extensions["upstream"].(map[string]any)
			if !reflect.DeepEqual(got, tc.upstream) {
				t.Errorf("extensions.upstream = %v, want %v", got, tc.upstream)
			}
			if tc.logged != "" && !strings.Contains(logs, tc.logged) {
				t.Errorf("log %q lacks %q", logs, tc.logged)
			}
		})
	}
}

func TestUnavailableAndCancelled(t *testing.T) {
	g, _ := present(t, &roundtrip.UnavailableError{Service: "banking", Op: "GET /persons", Err: roundtrip.ErrCircuitOpen})
	if g.Extensions["code"] != string(gqlerr.UpstreamUnavailable) || g.Message != "the banking service is unavailable; try again shortly" {
		t.Errorf("unavailable: %v %q", g.Extensions["code"], g.Message)
	}
	g, _ = present(t, fmt.Errorf("payments: GET /v1/customer: %w", context.Canceled))
	if g.Extensions["code"] != string(gqlerr.UpstreamUnavailable) || g.Message != "the request was cancelled" {
		t.Errorf("cancelled: %v %q", g.Extensions["code"], g.Message)
	}
	g, logs := present(t, gqlerr.InternalError(errors.New("bus down")))
	if g.Extensions["code"] != string(gqlerr.Internal) || g.Message != "internal error" || !strings.Contains(logs, "bus down") {
		t.Errorf("internal: %v %q, log %q", g.Extensions["code"], g.Message, logs)
	}
}
