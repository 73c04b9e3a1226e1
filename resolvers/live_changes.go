package resolvers

import (
	"github.com/google/uuid"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/live"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// walletCreatedID is the event id of the announcement of new wallets: the
// id a poll that finds the one real wallet among them gives its creation
// (the poller announces real wallets only), so that it is announced once.
// Several real wallets at once have no single such id.
func walletCreatedID(corporationID string, list []*banking.Wallet) string {
	var real []string
	for _, w := range list {
		if w.Type == banking.WalletTypeReal {
			real = append(real, w.ID)
		}
	}
	if len(real) != 1 {
		return uuid.NewString()
	}
	return events.ChangeID(relay.ID(relay.Wallet, corporationID, real[0]), live.Created)
}
