package relay

// Kinds lists every node kind, for the tests that go through them all.
func Kinds() []Kind {
	return []Kind{Customer, Order, Event, Person, Corporation, Card,
		Wallet, WalletRequisites, KycDocument, Invoice, Limit, CardTransaction}
}
