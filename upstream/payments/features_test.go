package payments_test

import (
	"testing"

	"github.com/fingraph/fingraph/upstream/payments"
)

// An upstream serves the spec's additions unless it serves only the spec;
// a feature this client does not know is never offered.
func TestOffersFollowsSpecOnly(t *testing.T) {
	c, err := payments.NewClient("http://127.0.0.1:1/payments", payments.Keys{})
	if err != nil {
		t.Fatal(err)
	}
	all := []payments.Feature{payments.IndividualListing, payments.SigningKeys}
	for _, f := range all {
		if !c.Offers(f) {
			t.Errorf("feature %d: not offered by an upstream with the additions", f)
		}
	}
	c.SpecOnly = true
	for _, f := range all {
		if c.Offers(f) {
			t.Errorf("feature %d: offered by an upstream that serves only the spec", f)
		}
	}
	c.SpecOnly = false
	if c.Offers(payments.Feature(0)) {
		t.Error("the zero Feature is offered")
	}
}
