package resolvers

import (
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/payments"
)

// Helpers of the payments, events and relay tests (pay_*, events_*,
// relay_* files).

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
