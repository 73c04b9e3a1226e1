package banking

import "testing"

// An upstream serves the spec's additions unless it serves only the spec;
// a feature this client does not know is never offered.
func TestOffersFollowsSpecOnly(t *testing.T) {
	c, err := NewClient("http://127.0.0.1:1/banking")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Feature{OffsetPaging, WalletTransactionListing} {
		if !c.Offers(f) {
			t.Errorf("feature %d: not offered by an upstream with the additions", f)
		}
	}
	c.SpecOnly = true
	for _, f := range []Feature{OffsetPaging, WalletTransactionListing} {
		if c.Offers(f) {
			t.Errorf("feature %d: offered by an upstream that serves only the spec", f)
		}
	}
	c.SpecOnly = false
	if c.Offers(Feature(0)) {
		t.Error("the zero Feature is offered")
	}
}
