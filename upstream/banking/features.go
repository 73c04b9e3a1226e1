package banking

// Feature is an addition to the banking spec that an upstream may serve.
// The sandbox serves every one; an upstream that serves only what the spec
// shows (Client.SpecOnly: the strict sandbox) serves none. Callers ask
// Client.Offers rather than knowing which upstream they talk to.
type Feature int

const (
	// OffsetPaging is meta[offset] on listings: pages past the first. The
	// spec shows meta[limit] only.
	OffsetPaging Feature = iota + 1
	// WalletTransactionListing is the listing of one wallet's
	// transactions (TransactionsService.ListByWallet); the spec shows a
	// listing of card transactions only.
	WalletTransactionListing
)

// Offers reports whether the upstream serves f.
func (c *Client) Offers(f Feature) bool {
	switch f {
	case OffsetPaging, WalletTransactionListing:
		return !c.SpecOnly
	}
	return false
}
