package resolvers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// The back-office fields of a person (profile level, primary currency,
// whether the person's own limits are off) are shown to staff only; anyone
// else reads null, and so does staff where the upstream does not say.
func TestPersonBackOfficeFieldsAreStaffOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	off := true
	h.banking.persons.add(demoCorp, &bankingPerson{ID: "person-bo", FirstName: "Bo", ProfileLevel: "advanced", PrimaryCurrency: "EUR",
		IsPersonLimitsDisabled: &off, CreatedBy: &banking.Actor{ID: "s-1", Type: "staff", FullName: "Sandra"},
		UpdatedBy: &banking.Actor{ID: "p-1", Type: "person", FullName: "Anna"}})
	q := `query($id: ID!) { person(id: $id) { profileLevel primaryCurrency isPersonLimitsDisabled createdBy { kind fullName } updatedBy { kind } } }`
	type answer struct {
		Person struct {
			ProfileLevel, PrimaryCurrency *string
			IsPersonLimitsDisabled        *bool
			CreatedBy, UpdatedBy          *struct{ Kind, FullName string }
		}
	}
	var asStaff answer
	h.as(staff).exec(q, map[string]any{"id": relay.ID(relay.Person, "person-bo")}).decode(t, &asStaff)
	p := asStaff.Person
	require.NotNil(t, p.ProfileLevel)
	assert.Equal(t, "advanced", *p.ProfileLevel)
	assert.Equal(t, "EUR", *p.PrimaryCurrency)
	assert.True(t, *p.IsPersonLimitsDisabled)
	assert.Equal(t, "STAFF", p.CreatedBy.Kind)
	assert.Equal(t, "PERSON", p.UpdatedBy.Kind)

	for _, who := range []principal{person, apiClient} {
		var got answer
		h.as(who).exec(q, map[string]any{"id": relay.ID(relay.Person, "person-bo")}).decode(t, &got)
		assert.Nil(t, got.Person.ProfileLevel, "%s", who.kind)
		assert.Nil(t, got.Person.PrimaryCurrency, "%s", who.kind)
		assert.Nil(t, got.Person.IsPersonLimitsDisabled, "%s", who.kind)
		assert.NotNil(t, got.Person.CreatedBy, "who made a person is not back-office")
	}

	var bare answer
	h.as(staff).exec(q, map[string]any{"id": relay.ID(relay.Person, demoPerson)}).decode(t, &bare)
	assert.Nil(t, bare.Person.ProfileLevel, "not said upstream: null, not empty")
	assert.Nil(t, bare.Person.IsPersonLimitsDisabled)
	assert.Nil(t, bare.Person.CreatedBy)
}

// A corporation's onboarding details, as the upstream has them.
func TestCorporationOnboardingDetails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	by := "person-kyc"
	h.banking.corporations.add(&bankingCorporation{ID: "corp-3", Name: "Third", AccountID: "acc-3", Identity: &banking.CorporationIdentity{ID: "ident-3"},
		IsInitialApplicationFilled: true, KYCDataProvidedByID: &by, KYCDataProvider: &banking.KYCDataProvider{ID: by, FirstName: "Kai", LastName: "Doe"},
		CreatedBy: &banking.Actor{ID: "s-1", Type: "staff", FullName: "Sandra"}, UpdatedBy: &banking.Actor{}})
	var got struct {
		Corporation struct {
			AccountID, IdentityID, KycDataProvidedByID *string
			IsInitialApplicationFilled                 bool
			HasAnotherBankAccount                      bool
			KycDataProvider                            *struct{ UpstreamID, FirstName, LastName string }
			CreatedBy, UpdatedBy                       *struct{ Kind string }
		}
	}
	h.as(staff).exec(`query($id: ID!) { corporation(id: $id) { accountId identityId kycDataProvidedById isInitialApplicationFilled
	  hasAnotherBankAccount kycDataProvider { upstreamId firstName lastName } createdBy { kind } updatedBy { kind } } }`,
		map[string]any{"id": walCorpGID("corp-3")}).decode(t, &got)
	c := got.Corporation
	assert.Equal(t, "acc-3", *c.AccountID)
	assert.Equal(t, "ident-3", *c.IdentityID)
	assert.Equal(t, by, *c.KycDataProvidedByID)
	assert.True(t, c.IsInitialApplicationFilled)
	assert.False(t, c.HasAnotherBankAccount)
	require.NotNil(t, c.KycDataProvider)
	assert.Equal(t, "Kai", c.KycDataProvider.FirstName)
	assert.Equal(t, "STAFF", c.CreatedBy.Kind)
	assert.Nil(t, c.UpdatedBy, "an empty actor is no actor")
}

// Who uploaded and who last changed a KYC document.
func TestKycDocumentDetails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: "doc-1", Name: "Registry", Type: "corporate", VerifyingStatus: banking.KYCVerified,
		CreatedBy: &banking.Actor{ID: "p-1", Type: "person", FullName: "Anna"}, UpdatedBy: &banking.Actor{ID: "s-1", Type: "staff", FullName: "Sandra"},
		CreatedByLoginID: "login-a", UpdatedByLoginID: "login-s"})
	h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: "doc-2", Name: "Bare", Type: "corporate"})
	var got struct {
		Corporation struct {
			KycDocuments []struct {
				ID, CorporationID, Status          string
				CreatedBy, UpdatedBy               *struct{ Kind, FullName string }
				CreatedByLoginID, UpdatedByLoginID *string
			}
		}
	}
	h.as(person).exec(`query($id: ID!) { corporation(id: $id) { kycDocuments { id corporationId status createdBy { kind fullName }
	  updatedBy { kind fullName } createdByLoginId updatedByLoginId } } }`, map[string]any{"id": walCorpGID(demoCorp)}).decode(t, &got)
	docs := got.Corporation.KycDocuments
	require.Len(t, docs, 2)
	assert.Equal(t, relay.ID(relay.KycDocument, demoCorp, "doc-1"), docs[0].ID)
	assert.Equal(t, walCorpGID(demoCorp), docs[0].CorporationID)
	assert.Equal(t, "VERIFIED", docs[0].Status)
	assert.Equal(t, "PERSON", docs[0].CreatedBy.Kind)
	assert.Equal(t, "Sandra", docs[0].UpdatedBy.FullName)
	assert.Equal(t, "login-a", *docs[0].CreatedByLoginID)
	assert.Equal(t, "login-s", *docs[0].UpdatedByLoginID)
	assert.Equal(t, "NO_MARK", docs[1].Status)
	assert.Nil(t, docs[1].CreatedBy)
	assert.Nil(t, docs[1].CreatedByLoginID)
}

// walTransactions lists n conversions of the demo EUR wallet, newest first
// (tx-n ... tx-1), every other one into it.
func walTransactions(h *harness, n int) {
	f := h.banking.transactions
	f.data.Lock()
	defer f.data.Unlock()
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		at := banking.Timestamp{Time: base.Add(time.Duration(i) * time.Hour)}
		t := &banking.Transaction{ID: fmt.Sprint("tx-", i), Type: "convert", CreatedAt: at, UpdatedAt: at, SourceAmount: int64(100 * i),
			SourceCurrency: "EUR", TargetAmount: int64(110 * i), TargetCurrency: "USD", SourceCounterpartyID: demoWalletEUR,
			TargetCounterpartyID: demoWalletUSD, Status: json.RawMessage(`{"code":0}`), Score: 12.5, ScoreRangeID: "low", ChargeEUR: 3}
		if i%2 == 0 {
			t.SourceCounterpartyID, t.TargetCounterpartyID = demoWalletUSD, demoWalletEUR
			t.SourceCurrency, t.TargetCurrency = "USD", "EUR"
		}
		f.byWallet[demoWalletEUR] = append([]*banking.Transaction{t}, f.byWallet[demoWalletEUR]...)
	}
}

const walletTxPage = `query($c: ID!, $w: ID!, $first: Int, $after: String, $dir: SortDirection) { corporation(id: $c) { wallet(id: $w) {
  transactions(first: $first, after: $after, sortDirection: $dir) {
    edges { cursor node { id direction status statusCode source { amount currency } target { currency } sourceWalletId score scoreRangeId } }
    pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } } } }`

type walletTxAnswer struct {
	Corporation struct {
		Wallet struct {
			Transactions *struct {
				Edges []struct {
					Cursor string
					Node   struct {
						ID, Direction, Status string
						StatusCode            *int
						Source                *struct {
							Amount   int64
							Currency string
						}
						SourceWalletID *string
						Score          *float64
						ScoreRangeID   *string
					}
				}
				PageInfo struct {
					HasNextPage, HasPreviousPage bool
					EndCursor                    *string
				}
				TotalCount int
			}
		}
	}
}

func (a walletTxAnswer) ids() []string {
	var out []string
	for _, e := range a.Corporation.Wallet.Transactions.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

func walletTxVars(first int, after any, dir any) map[string]any {
	return map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID(demoWalletEUR), "first": first, "after": after, "dir": dir}
}

// A wallet's transactions page on with their cursors, newest first unless
// asked otherwise, each one's direction relative to the wallet; the
// back-office fields are staff's only.
func TestWalletTransactionsPageOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	walTransactions(h, 5)
	h.as(person)
	var seen []string
	var after any
	for pages := 1; ; pages++ {
		var a walletTxAnswer
		h.exec(walletTxPage, walletTxVars(2, after, nil)).decode(t, &a)
		tx := a.Corporation.Wallet.Transactions
		require.NotNil(t, tx)
		assert.Equal(t, 5, tx.TotalCount)
		assert.Equal(t, pages > 1, tx.PageInfo.HasPreviousPage)
		seen = append(seen, a.ids()...)
		if !tx.PageInfo.HasNextPage {
			assert.Equal(t, 3, pages)
			break
		}
		require.Less(t, pages, 3)
		after = *tx.PageInfo.EndCursor
	}
	assert.Equal(t, []string{"tx-5", "tx-4", "tx-3", "tx-2", "tx-1"}, seen)

	var first walletTxAnswer
	h.exec(walletTxPage, walletTxVars(2, nil, nil)).decode(t, &first)
	e := first.Corporation.Wallet.Transactions.Edges
	assert.Equal(t, "OUTGOING", e[0].Node.Direction, "tx-5 leaves the wallet")
	assert.Equal(t, "INCOMING", e[1].Node.Direction, "tx-4 reaches it")
	assert.Equal(t, "APPROVED", e[0].Node.Status)
	assert.Equal(t, walWalletGID(demoWalletEUR), *e[0].Node.SourceWalletID)
	assert.Equal(t, int64(500), e[0].Node.Source.Amount)
	assert.Nil(t, e[0].Node.Score, "not staff")
	assert.Nil(t, e[0].Node.ScoreRangeID)

	var asc walletTxAnswer
	h.exec(walletTxPage, walletTxVars(2, nil, "ASC")).decode(t, &asc)
	assert.Equal(t, []string{"tx-1", "tx-2"}, asc.ids(), "oldest first when asked")

	var asStaff walletTxAnswer
	h.as(staff).exec(walletTxPage, walletTxVars(1, nil, nil)).decode(t, &asStaff)
	n := asStaff.Corporation.Wallet.Transactions.Edges[0].Node
	require.NotNil(t, n.Score)
	assert.Equal(t, 12.5, *n.Score)
	assert.Equal(t, "low", *n.ScoreRangeID)
}

// first is 1 to 100, and a cursor is bound to its wallet and order: a
// cursor of the other order, of another wallet, or made up, is refused on
// after before any upstream call.
func TestWalletTransactionsRefuseForeignCursors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	walTransactions(h, 3)
	h.banking.transactions.data.Lock()
	h.banking.transactions.byWallet[demoWalletUSD] = h.banking.transactions.byWallet[demoWalletEUR]
	h.banking.transactions.data.Unlock()
	h.as(person)
	var asc walletTxAnswer
	h.exec(walletTxPage, walletTxVars(1, nil, "ASC")).decode(t, &asc)
	var usd walletTxAnswer
	h.exec(walletTxPage, map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID(demoWalletUSD), "first": 1}).decode(t, &usd)
	before := h.banking.transactions.calls("ListByWallet")
	for _, cursor := range []string{*asc.Corporation.Wallet.Transactions.PageInfo.EndCursor, // another order
		*usd.Corporation.Wallet.Transactions.PageInfo.EndCursor, // another wallet
		"b2Zmc2V0OjI"} { // made up
		refused(t, h.exec(walletTxPage, walletTxVars(1, cursor, nil)), "BAD_USER_INPUT", "after")
	}
	for _, first := range []int{0, -1, 101} {
		refused(t, h.exec(walletTxPage, walletTxVars(first, nil, nil)), "BAD_USER_INPUT", "first")
	}
	assert.Equal(t, before, h.banking.transactions.calls("ListByWallet"))
}

// Where the upstream lists no wallet transactions (the spec shows none),
// the field says so, typed, and never answers an empty page; a 404 or 405
// of the route says the same. Other errors are what they are.
func TestWalletTransactionsNotOffered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.specOnly = true
	resp := h.as(person).exec(walletTxPage, walletTxVars(5, nil, nil))
	e := resp.only(t)
	assert.Equal(t, "UPSTREAM_UNAVAILABLE", e.Code())
	assert.Equal(t, reasonNotOffered, e.Extensions["reason"])
	assert.Zero(t, h.banking.transactions.calls("ListByWallet"), "not asked where not offered")

	for _, tc := range []struct {
		err    error
		code   string
		reason any
	}{
		{bankingNotFound(), "UPSTREAM_UNAVAILABLE", reasonNotOffered},
		{bankingRejection(http.StatusMethodNotAllowed, 0, "", "method not allowed"), "UPSTREAM_UNAVAILABLE", reasonNotOffered},
		{bankingRejection(http.StatusForbidden, 0, "", "not yours"), "FORBIDDEN", nil},
		{unavailable("banking"), "UPSTREAM_UNAVAILABLE", nil},
	} {
		h := newHarness(t)
		h.banking.transactions.failNext("ListByWallet", tc.err)
		e := h.as(person).exec(walletTxPage, walletTxVars(5, nil, nil)).only(t)
		assert.Equal(t, tc.code, e.Code())
		assert.Equal(t, tc.reason, e.Extensions["reason"])
		assert.Equal(t, []any{"corporation", "wallet", "transactions"}, e.Path)
	}
}

// A wallet reached twice with the same page pays for it once.
func TestWalletTransactionsShareAPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	walTransactions(h, 2)
	h.as(person)
	h.exec(`query($c: ID!, $w: ID!) { corporation(id: $c) { a: wallet(id: $w) { transactions(first: 2) { totalCount } }
	  b: wallet(id: $w) { transactions(first: 2) { totalCount } } c: wallet(id: $w) { transactions(first: 1) { totalCount } } } }`,
		map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID(demoWalletEUR)}).noErrors(t)
	assert.Equal(t, 2, h.banking.transactions.calls("ListByWallet"), "two distinct pages")
}
