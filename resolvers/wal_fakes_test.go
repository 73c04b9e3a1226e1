package resolvers

// Helpers of the fake banking upstream's wallet, requisites, limit, card
// and report services (fakes_banking_test.go), and of the tests of their
// resolvers (wal_*, card_*, det_*).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
)

// walSees refuses a caller who does not see corporation corpID as the
// sandbox does, with a 404 that does not tell whether it exists: staff
// (and, as fakeCorporations lists them, introducers) see every
// corporation, anyone else its own.
func (b *fakeBanking) walSees(ctx context.Context, corpID string) error {
	who, err := b.caller(ctx)
	if err != nil {
		return err
	}
	b.corporations.data.Lock()
	c := b.corporations.find(corpID)
	b.corporations.data.Unlock()
	if c == nil || (who.kind != session.Staff && who.kind != session.Introducer && who.corporationID != corpID) {
		return bankingNotFound()
	}
	return nil
}

// walList copies the corporation's records without counting a call.
func (f *fakeCorpList[T]) walList(corpID string) []*T {
	f.data.Lock()
	defer f.data.Unlock()
	out := make([]*T, 0, len(f.byCorp[corpID]))
	for _, v := range f.byCorp[corpID] {
		c := *v
		out = append(out, &c)
	}
	return out
}

// walIBAN is a valid IBAN of country with bban: the ISO 13616 check digits
// computed, as a bank issuing one does.
func walIBAN(country, bban string) string {
	var digits strings.Builder
	for _, r := range bban + country + "00" {
		if r >= 'A' && r <= 'Z' {
			fmt.Fprint(&digits, int(r-'A'+10))
		} else {
			digits.WriteRune(r)
		}
	}
	n, _ := new(big.Int).SetString(digits.String(), 10)
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", country, check, bban)
}

// walWalletGID is the global id of a wallet of the demo corporation.
func walWalletGID(id string) string { return relay.ID(relay.Wallet, demoCorp, id) }

// walCorpGID is a corporation's global id.
func walCorpGID(id string) string { return relay.ID(relay.Corporation, id) }

// walNoCalls fails the test when the banking upstream was called: a refused
// call costs the upstream nothing.
func (h *harness) walNoCalls(what string) {
	h.t.Helper()
	if n := h.banking.total(); n != 0 {
		h.t.Fatalf("%s: %d banking calls, want none", what, n)
	}
}

// walEvent is a published event as a subscriber reads it.
type walEvent struct {
	Name    string
	Payload map[string]any
}

// walPublished is what the resolvers published, in order.
func (h *harness) walPublished() []walEvent {
	h.t.Helper()
	h.events.mu.Lock()
	defer h.events.mu.Unlock()
	out := make([]walEvent, len(h.events.published))
	for i, e := range h.events.published {
		out[i].Name = e.Name
		if err := json.Unmarshal(e.Payload, &out[i].Payload); err != nil {
			h.t.Fatal(err)
		}
	}
	return out
}
