package bankpoll

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/fingraph/fingraph/upstream/banking"
)

// fakeBanking is the banking upstream as the poller reads it, from memory:
// refused names the listings answered with that error instead.
type fakeBanking struct {
	refused map[string]error
	calls   []string
}

func (f *fakeBanking) answer(listing string) error {
	f.calls = append(f.calls, listing)
	return f.refused[listing]
}

type (
	fakeWallets      struct{ *fakeBanking }
	fakeTransactions struct{ *fakeBanking }
	fakeCards        struct{ *fakeBanking }
	fakeKYC          struct{ *fakeBanking }
	fakeLimits       struct{ *fakeBanking }
	fakeInvoices     struct{ *fakeBanking }
	fakePersons      struct{ *fakeBanking }
)

func (f fakeWallets) List(context.Context, string) ([]*banking.Wallet, error) {
	if err := f.answer("wallets"); err != nil {
		return nil, err
	}
	return []*banking.Wallet{{ID: "w-1", Type: banking.WalletTypeReal}, {ID: "w-2", Type: banking.WalletTypeReal}}, nil
}

func (f fakeTransactions) ListByWallet(_ context.Context, _, walletID string, _ *banking.ListOptions) (*banking.TransactionList, error) {
	if err := f.answer("wallet-transactions:" + walletID); err != nil {
		return nil, err
	}
	return &banking.TransactionList{}, nil
}

func (f fakeCards) List(context.Context) ([]*banking.Card, error) {
	if err := f.answer("cards"); err != nil {
		return nil, err
	}
	return []*banking.Card{{ID: "c-1"}}, nil
}

func (f fakeCards) Transactions(_ context.Context, id string, _ *banking.ListOptions) (*banking.CardTransactionList, error) {
	if err := f.answer("card-transactions:" + id); err != nil {
		return nil, err
	}
	return &banking.CardTransactionList{}, nil
}

func (f fakeKYC) List(context.Context, string) ([]*banking.KYCDocument, error) {
	return nil, f.answer("kyc-documents")
}

func (f fakeLimits) List(context.Context, string) ([]*banking.Limit, error) {
	return nil, f.answer("limits")
}

func (f fakeInvoices) List(context.Context, string) ([]*banking.Invoice, error) {
	return nil, f.answer("invoices")
}

func (f fakePersons) List(context.Context, *banking.ListOptions) (*banking.PersonList, error) {
	if err := f.answer("persons"); err != nil {
		return nil, err
	}
	return &banking.PersonList{}, nil
}

func (f *fakeBanking) upstream() Upstream {
	return Upstream{Wallets: fakeWallets{f}, Transactions: fakeTransactions{f}, Cards: fakeCards{f}, KYC: fakeKYC{f},
		Limits: fakeLimits{f}, Invoices: fakeInvoices{f}, Persons: fakePersons{f}}
}

func keys(lists []listing) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l.key)
	}
	slices.Sort(out)
	return out
}

// A poll reads every listing through the upstream it is given: a listing
// the principal may not read is kept as it was, any other failure fails
// the poll, and an upstream without a transaction listing is not asked
// for one.
func TestPollReadsThroughItsUpstream(t *testing.T) {
	forbidden := &banking.ErrorResponse{StatusCode: http.StatusForbidden}
	down := errors.New("connection refused")
	for _, tc := range []struct {
		name         string
		refused      map[string]error
		noTransfers  bool
		wantLists    []string
		wantKept     []string
		wantErr      error
		wantNotAsked []string
	}{
		{name: "every listing",
			wantLists: []string{"card-transactions:c-1", "cards", "invoices", "kyc-documents", "limits", "persons", "wallet-transactions:w-1", "wallet-transactions:w-2", "wallets"}},
		{name: "a listing the principal may not read", refused: map[string]error{"kyc-documents": forbidden, "wallet-transactions:w-2": forbidden},
			wantLists: []string{"card-transactions:c-1", "cards", "invoices", "limits", "persons", "wallet-transactions:w-1", "wallets"},
			wantKept:  []string{"kyc-documents", "wallet-transactions:w-2"}},
		{name: "an upstream without a transaction listing", noTransfers: true,
			wantLists:    []string{"card-transactions:c-1", "cards", "invoices", "kyc-documents", "limits", "persons", "wallets"},
			wantNotAsked: []string{"wallet-transactions:w-1", "wallet-transactions:w-2"}},
		{name: "an upstream failure", refused: map[string]error{"limits": down}, wantErr: down},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBanking{refused: tc.refused}
			p := &Poller{Banking: f.upstream()}
			if tc.noTransfers {
				p.Banking.Transactions = nil
			}
			lists, kept, err := p.read(context.Background(), "corp-1", snapshot{})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(lists); !slices.Equal(got, tc.wantLists) {
				t.Errorf("listings read %v, want %v", got, tc.wantLists)
			}
			slices.Sort(kept)
			if !slices.Equal(kept, tc.wantKept) {
				t.Errorf("kept %v, want %v", kept, tc.wantKept)
			}
			for _, l := range tc.wantNotAsked {
				if slices.Contains(f.calls, l) {
					t.Errorf("%s was asked for", l)
				}
			}
		})
	}
}

// A client that serves only what the spec shows, which has no transaction
// listing, gives the poller none to read; any other gives all.
func TestUpstreamOfASpecOnlyClientHasNoTransactionListing(t *testing.T) {
	c, err := banking.NewClient("http://127.0.0.1:1/banking")
	if err != nil {
		t.Fatal(err)
	}
	if u := UpstreamOf(c); u.Transactions == nil || u.Wallets == nil || u.Persons == nil || u.Breaker == nil {
		t.Fatalf("a full client's view lacks a listing: %+v", u)
	}
	c.SpecOnly = true
	if u := UpstreamOf(c); u.Transactions != nil || u.Wallets == nil {
		t.Fatalf("a spec-only client's view: %+v", u)
	}
}
