package resolvers

import (
	"testing"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Helpers of the payments, events and relay tests (pay_*, events_*,
// relay_* files).

// wantFieldError fails the test unless resp has exactly one error, a
// BAD_USER_INPUT naming field in extensions.field, with a message.
func wantFieldError(t *testing.T, resp *response, field string) {
	t.Helper()
	e := resp.only(t)
	if e.Code() != "BAD_USER_INPUT" || e.Extensions["field"] != field || e.Message == "" {
		t.Fatalf("want BAD_USER_INPUT on %s with a message, got %s", field, resp)
	}
}

// wantErrorCode fails the test unless resp has exactly one error, of code.
func wantErrorCode(t *testing.T, resp *response, code string) gqlError {
	t.Helper()
	e := resp.only(t)
	if e.Code() != code {
		t.Fatalf("want %s, got %s", code, resp)
	}
	return e
}

// assertNoUpstreamCalls fails the test when either upstream was called.
func assertNoUpstreamCalls(t *testing.T, h *harness) {
	t.Helper()
	if n := h.payments.total() + h.banking.total(); n != 0 {
		t.Fatalf("%d upstream calls, want none", n)
	}
}

// globalCustomer and globalOrder are global ids.
func globalCustomer(raw string) string { return relay.ID(relay.Customer, raw) }
func globalOrder(raw string) string    { return relay.ID(relay.Order, raw) }

// addCustomerWithCards stores customer id with stored cards of the given tokens.
func addCustomerWithCards(h *harness, id string, tokens ...string) {
	var ms []payments.PaymentMethod
	for _, tok := range tokens {
		ms = append(ms, payments.PaymentMethod{CardDetails: payments.CardDetails{Type: "card", Scheme: "visa", Last4: tok[len(tok)-1:] + "000"},
			Created: "2025-01-02T03:04:05Z", Token: tok})
	}
	h.payments.customers.add(paymentsCustomer{ID: id, Number: "N-" + id, Status: "active", Method: deferred(ms)})
}
