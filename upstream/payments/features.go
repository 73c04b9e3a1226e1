package payments

// Feature is an addition to the payments spec that an upstream may serve.
// The sandbox serves every one; an upstream that serves only what the spec
// shows (Client.SpecOnly: the strict sandbox) serves none. Callers ask
// Client.Offers rather than knowing which upstream they talk to.
type Feature int

const (
	// IndividualListing is the listing of individuals by status
	// (IndividualsService.List).
	IndividualListing Feature = iota + 1
	// SigningKeys is the published key set (/.well-known/jwks.json) that
	// signed order tokens are verified against
	// (OrderTokensService.VerifyAll); without it, ConfirmAll reads the
	// orders from the order listing instead.
	SigningKeys
)

// Offers reports whether the upstream serves f.
func (c *Client) Offers(f Feature) bool {
	switch f {
	case IndividualListing, SigningKeys:
		return !c.SpecOnly
	}
	return false
}
