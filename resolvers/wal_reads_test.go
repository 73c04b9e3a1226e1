package resolvers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// walCardWallet is a wallet of the demo corporation with everything the
// upstream can say about one: a pending wallet, requisites of each type,
// its bank, who made it.
func walCardWallet() *bankingWallet {
	card := "CARD"
	at := banking.Timestamp{Time: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}
	return &bankingWallet{ID: "wallet-card", Name: "Cards", Currency: "EUR", Type: "real", Amount: 12_345, Adapter: "adapter_a",
		Purpose: &card, CreatedAt: at, UpdatedAt: at, CreatedByLoginID: "login-7",
		Pending:     &banking.PendingWallet{ID: "wallet-card-pending", Amount: 250},
		CreatedBy:   &banking.Actor{ID: "s-1", Type: "staff", FullName: "Sandra Staff"},
		BankAddress: &banking.BankAddress{Name: "Sandbox Bank A", Street: "Elizabetes iela 1", PostCode: "LV-1010", City: "Riga", Country: "LV"},
		Requisites: []*banking.Requisites{
			{ID: "rq-sepa", Number: "LV80BANK0000435195001", Code: "SANDLV22", Type: "sepa", CreatedAt: at},
			{ID: "rq-cb", Number: "12345678", Code: "SANDGB2L", Type: "cross-border"},
			{ID: "rq-uk", Number: "31926819", Code: "601613", Type: "uk-local"},
			{ID: "rq-new", Number: "X", Code: "Y", Type: "swift-gpi"},
		}}
}

const walletFields = `id upstreamId name currency balance { amount currency } type purpose adapter createdAt
  bankAddress { name street postCode city country } createdBy { upstreamId kind fullName } createdByLoginId updatedAt
  requisites { id upstreamId number code type createdAt }
  corporation { id }
  pending { id upstreamId name currency balance { amount currency } type adapter requisites { id } corporation { id } }`

type walletAnswer struct {
	ID, UpstreamID, Name, Currency, Type string
	Balance                              struct {
		Amount   int64
		Currency string
	}
	Purpose, Adapter, CreatedAt, CreatedByLoginID, UpdatedAt *string
	BankAddress                                              *struct{ Name, Street, PostCode, City, Country string }
	CreatedBy                                                *struct{ UpstreamID, Kind, FullName string }
	Requisites                                               []struct {
		ID, UpstreamID, Number, Code, Type string
		CreatedAt                          *string
	}
	Corporation *struct{ ID string }
	Pending     *struct {
		ID, UpstreamID, Name, Currency, Type string
		Balance                              struct {
			Amount   int64
			Currency string
		}
		Adapter     *string
		Requisites  []struct{ ID string }
		Corporation *struct{ ID string }
	}
}

// A corporation's wallets come from one listing, with what the upstream
// says of each mapped into the graph: global ids that name the
// corporation, the adapter's enum (null for one the gateway does not
// know), requisites typed (OTHER for a new type), the pending wallet with
// what it lacks taken from its real wallet, the bank and the creator.
// wallet(id) is served from the same listing, by a real or a pending id.
func TestCorporationWalletsAreMappedFromOneListing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.wallets.add(demoCorp, walCardWallet())
	h.banking.wallets.add(demoCorp, &bankingWallet{ID: "wallet-odd", Name: "Odd", Currency: "SEK", Type: "real", Adapter: "adapter_z"})

	var got struct {
		Corporation struct {
			Wallets []walletAnswer
			Card    *walletAnswer
			Pending *walletAnswer
			Missing *walletAnswer
		}
	}
	h.as(staff).exec(`query($c: ID!, $w: ID!, $p: ID!, $m: ID!) { corporation(id: $c) {
	  wallets { `+walletFields+` }
	  card: wallet(id: $w) { `+walletFields+` }
	  pending: wallet(id: $p) { id type balance { amount currency } corporation { id } }
	  missing: wallet(id: $m) { id } } }`,
		map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID("wallet-card"), "p": walWalletGID("wallet-card-pending"), "m": "no-such-wallet"}).decode(t, &got)

	ws := got.Corporation.Wallets
	require.Len(t, ws, 4)
	assert.Equal(t, []string{demoWalletEUR, demoWalletUSD, "wallet-card", "wallet-odd"}, []string{ws[0].UpstreamID, ws[1].UpstreamID, ws[2].UpstreamID, ws[3].UpstreamID})
	w := ws[2]
	assert.Equal(t, walWalletGID("wallet-card"), w.ID)
	assert.Equal(t, "Cards", w.Name)
	assert.Equal(t, int64(12_345), w.Balance.Amount)
	assert.Equal(t, "EUR", w.Balance.Currency)
	assert.Equal(t, "REAL", w.Type)
	assert.Equal(t, "CARD", *w.Purpose)
	assert.Equal(t, "ADAPTER_A", *w.Adapter)
	assert.Equal(t, "2025-03-01T10:00:00Z", *w.CreatedAt)
	assert.Equal(t, "login-7", *w.CreatedByLoginID)
	require.NotNil(t, w.BankAddress)
	assert.Equal(t, "LV-1010", w.BankAddress.PostCode)
	require.NotNil(t, w.CreatedBy)
	assert.Equal(t, "STAFF", w.CreatedBy.Kind)
	assert.Equal(t, "Sandra Staff", w.CreatedBy.FullName)
	require.NotNil(t, w.Corporation)
	assert.Equal(t, walCorpGID(demoCorp), w.Corporation.ID)

	types := []string{}
	for _, q := range w.Requisites {
		types = append(types, q.Type)
	}
	assert.Equal(t, []string{"SEPA", "CROSS_BORDER", "UK_LOCAL", "OTHER"}, types)
	assert.Equal(t, relay.ID(relay.WalletRequisites, demoCorp, "rq-sepa"), w.Requisites[0].ID)
	assert.Equal(t, "rq-sepa", w.Requisites[0].UpstreamID)
	assert.NotNil(t, w.Requisites[0].CreatedAt)
	assert.Nil(t, w.Requisites[1].CreatedAt, "no creation time is null, not year 1")

	p := w.Pending
	require.NotNil(t, p, "a wallet with a pending wallet shows it")
	assert.Equal(t, walWalletGID("wallet-card-pending"), p.ID)
	assert.Equal(t, "PENDING", p.Type)
	assert.Equal(t, "Cards (pending)", p.Name)
	assert.Equal(t, "EUR", p.Currency, "a pending wallet without a currency is in its real wallet's")
	assert.Equal(t, int64(250), p.Balance.Amount)
	assert.Equal(t, "ADAPTER_A", *p.Adapter)
	assert.Empty(t, p.Requisites)
	require.NotNil(t, p.Corporation)
	assert.Equal(t, walCorpGID(demoCorp), p.Corporation.ID)

	odd := ws[3]
	assert.Nil(t, odd.Adapter, "an adapter the gateway does not know is null")
	assert.Nil(t, odd.Pending)
	assert.Nil(t, odd.Purpose)
	assert.Nil(t, odd.CreatedAt)
	assert.Nil(t, odd.BankAddress)
	assert.Nil(t, odd.CreatedBy)
	assert.Empty(t, odd.Requisites)

	require.NotNil(t, got.Corporation.Card)
	assert.Equal(t, w, *got.Corporation.Card, "wallet(id) shows what wallets shows")
	require.NotNil(t, got.Corporation.Pending)
	assert.Equal(t, "PENDING", got.Corporation.Pending.Type)
	assert.Equal(t, walWalletGID("wallet-card-pending"), got.Corporation.Pending.ID)
	assert.Nil(t, got.Corporation.Missing, "a wallet the corporation does not have is null")
	assert.Equal(t, 1, h.banking.wallets.calls("List"), "wallets and wallet(id) share one listing")
}

// The corporation's other lists: requisites (attached or not), invoices
// (typed, amounts in their currency), limits (amounts in the
// corporation's currency, null where there is no limit).
func TestCorporationRequisitesInvoicesAndLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	at := banking.Timestamp{Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	h.banking.requisites.add(demoCorp, &banking.Requisites{ID: "rq-1", Number: "LV80BANK0000435195001", Code: "SANDLV22", Type: "SEPA", UpdatedAt: at})
	h.banking.invoices.add(demoCorp, &banking.Invoice{ID: "inv-1", Type: "opening-fee", Amount: 5_000, UnpaidAmount: 1_000, Currency: "EUR",
		Repayments: []banking.Repayment{{ID: "rp-1", Amount: 4_000, Type: "balance"}}, InvoicePaymentTransactionID: "tx-9", CreatedAt: at})
	h.banking.invoices.add(demoCorp, &banking.Invoice{ID: "inv-2", Type: "monthly-service-fee", IsPaid: true, Amount: 900, Currency: "EUR"})
	h.banking.invoices.add(demoCorp, &banking.Invoice{ID: "inv-3", Type: "card-fee", Amount: 100, Currency: "EUR"})
	daily, max := int64(3), int64(1_000_000)
	h.banking.limits.add(demoCorp, &banking.Limit{ID: "lim-1", PaymentMethod: "internal", TransactionType: "convert",
		LimitSet: banking.LimitSet{DailySuccessfulVelocity: &daily, MaximumAmount: &max}, UpdatedAt: at})

	var got struct {
		Corporation struct {
			WalletRequisites []struct {
				ID, Type  string
				UpdatedAt *string
			}
			Invoices []struct {
				ID, UpstreamID, Type string
				IsPaid               bool
				Amount, UnpaidAmount struct {
					Amount   int64
					Currency string
				}
				PaymentTransactionID *string
				Repayments           []struct {
					ID     string
					Amount struct{ Amount int64 }
					Type   string
				}
				CreatedAt *string
			}
			Limits []struct {
				ID, UpstreamID, PaymentMethod, TransactionType string
				DailySuccessfulVelocity                        *int64
				WeeklySuccessfulVelocity                       *int64
				MaximumAmount                                  *struct {
					Amount   int64
					Currency string
				}
				MinimumAmount *struct{ Amount int64 }
				UpdatedAt     *string
			}
		}
	}
	h.as(person).exec(`query($c: ID!) { corporation(id: $c) {
	  walletRequisites { id type updatedAt }
	  invoices { id upstreamId type isPaid amount { amount currency } unpaidAmount { amount currency } paymentTransactionId
	    repayments { id amount { amount } type } createdAt }
	  limits { id upstreamId paymentMethod transactionType dailySuccessfulVelocity weeklySuccessfulVelocity
	    maximumAmount { amount currency } minimumAmount { amount } updatedAt } } }`,
		map[string]any{"c": walCorpGID(demoCorp)}).decode(t, &got)
	c := got.Corporation

	require.Len(t, c.WalletRequisites, 1)
	assert.Equal(t, relay.ID(relay.WalletRequisites, demoCorp, "rq-1"), c.WalletRequisites[0].ID)
	assert.Equal(t, "SEPA", c.WalletRequisites[0].Type, "the type is read in any case")
	assert.Equal(t, "2025-01-02T03:04:05Z", *c.WalletRequisites[0].UpdatedAt)

	require.Len(t, c.Invoices, 3)
	inv := c.Invoices[0]
	assert.Equal(t, relay.ID(relay.Invoice, demoCorp, "inv-1"), inv.ID)
	assert.Equal(t, "OPENING_FEE", inv.Type)
	assert.False(t, inv.IsPaid)
	assert.Equal(t, int64(5_000), inv.Amount.Amount)
	assert.Equal(t, int64(1_000), inv.UnpaidAmount.Amount)
	assert.Equal(t, "EUR", inv.UnpaidAmount.Currency)
	assert.Equal(t, "tx-9", *inv.PaymentTransactionID)
	require.Len(t, inv.Repayments, 1)
	assert.Equal(t, int64(4_000), inv.Repayments[0].Amount.Amount)
	assert.Equal(t, "MONTHLY_SERVICE_FEE", c.Invoices[1].Type)
	assert.Nil(t, c.Invoices[1].PaymentTransactionID)
	assert.Empty(t, c.Invoices[1].Repayments, "no repayments is an empty list")
	assert.Equal(t, "OTHER", c.Invoices[2].Type, "an invoice type the gateway does not know")

	require.Len(t, c.Limits, 1)
	l := c.Limits[0]
	assert.Equal(t, relay.ID(relay.Limit, demoCorp, "lim-1"), l.ID)
	assert.Equal(t, "internal", l.PaymentMethod)
	assert.Equal(t, int64(3), *l.DailySuccessfulVelocity)
	assert.Nil(t, l.WeeklySuccessfulVelocity, "no limit is null")
	require.NotNil(t, l.MaximumAmount)
	assert.Equal(t, int64(1_000_000), l.MaximumAmount.Amount)
	assert.Equal(t, "EUR", l.MaximumAmount.Currency, "limits are in the corporation's currency")
	assert.Nil(t, l.MinimumAmount)
}

// A principal of one corporation never reads another's wallets, requisites,
// invoices or limits: the corporation is outside its scope (null), a
// wallet's global id of another corporation is NOT_FOUND, and neither costs
// a listing of the other corporation's records.
func TestAnotherCorporationsWalletsAreNeverRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.wallets.add(otherCorp, &bankingWallet{ID: "wallet-other", Name: "Theirs", Currency: "EUR", Type: "real", Amount: 999})
	for _, who := range []principal{person, apiClient} {
		h.as(who)
		var got struct{ Corporation *struct{ ID string } }
		h.exec(`query($c: ID!) { corporation(id: $c) { id wallets { id } wallet(id: "wallet-other") { id } walletRequisites { id } invoices { id } limits { id } } }`,
			map[string]any{"c": walCorpGID(otherCorp)}).decode(t, &got)
		assert.Nil(t, got.Corporation, "%s: another corporation is outside the scope", who.kind)

		resp := h.exec(`query($id: ID!) { node(id: $id) { id ... on Wallet { balance { amount } } } }`, map[string]any{"id": relay.ID(relay.Wallet, otherCorp, "wallet-other")})
		assert.Equal(t, "NOT_FOUND", resp.code(t), "%s: %s", who.kind, resp)
		assert.NotContains(t, resp.String(), "999")

		// Another corporation's wallet id under one's own corporation.
		resp = h.exec(`query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { id } } }`,
			map[string]any{"c": walCorpGID(demoCorp), "w": relay.ID(relay.Wallet, otherCorp, "wallet-other")})
		assert.Equal(t, "NOT_FOUND", resp.code(t), "%s: %s", who.kind, resp)
	}
	for _, svc := range []*fakeService{&h.banking.wallets.fakeService, &h.banking.requisites.fakeService, &h.banking.invoices.fakeService, &h.banking.limits.fakeService} {
		assert.Zero(t, svc.calls("List"), "%s was listed", svc.name)
	}
}

// Staff read any corporation's wallets, and each wallet's global id names
// its own corporation.
func TestStaffReadEveryCorporationsWallets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.wallets.add(otherCorp, &bankingWallet{ID: "wallet-other", Name: "Theirs", Currency: "EUR", Type: "real"})
	var got struct {
		Corporations struct {
			Edges []struct {
				Node struct {
					UpstreamID string
					Wallets    []struct{ ID string }
				}
			}
		}
	}
	h.as(staff).exec(`{ corporations(first: 10) { edges { node { upstreamId wallets { id } } } } }`, nil).decode(t, &got)
	byCorp := map[string][]string{}
	for _, e := range got.Corporations.Edges {
		for _, w := range e.Node.Wallets {
			byCorp[e.Node.UpstreamID] = append(byCorp[e.Node.UpstreamID], w.ID)
		}
	}
	assert.Equal(t, []string{relay.ID(relay.Wallet, otherCorp, "wallet-other")}, byCorp[otherCorp])
	assert.Equal(t, []string{walWalletGID(demoWalletEUR), walWalletGID(demoWalletUSD)}, byCorp[demoCorp])
	assert.Equal(t, 2, h.banking.wallets.calls("List"), "one listing per corporation")
}

// A failed wallet listing fails the wallets field only, with the code the
// upstream's answer maps to; the corporation is still shown, and the
// upstream's server error text never reaches the client.
func TestWalletListingErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", bankingRejection(http.StatusForbidden, 0, "", "not yours"), "FORBIDDEN"},
		{"not found", bankingNotFound(), "NOT_FOUND"},
		{"rate limited", bankingRejection(http.StatusTooManyRequests, 0, "", "slow down"), "RATE_LIMITED"},
		{"server error", bankingRejection(http.StatusInternalServerError, 0, "", "stack trace at db.go:12"), "UPSTREAM_UNAVAILABLE"},
		{"no answer", unavailable("banking"), "UPSTREAM_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.banking.wallets.failNext("List", tc.err)
			resp := h.as(person).exec(`query($c: ID!) { corporation(id: $c) { name wallets { id } } }`, map[string]any{"c": walCorpGID(demoCorp)})
			e := resp.only(t)
			assert.Equal(t, tc.want, e.Code(), resp.String())
			assert.Equal(t, []any{"corporation", "wallets"}, e.Path)
			assert.Contains(t, string(resp.Data), `"name":"Demo Corp"`)
			assert.NotContains(t, e.Message, "db.go")
		})
	}
}

// A wallet reached without its corporation (node) reads the corporation
// when asked; Wallet.corporation under Corporation.wallets costs nothing
// more.
func TestWalletCorporationEdge(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got struct {
		Node struct {
			Name        string
			Corporation struct{ Name string }
			Pending     *struct{ ID string }
		}
	}
	h.as(apiClient).exec(`query($id: ID!) { node(id: $id) { ... on Wallet { name corporation { name } pending { id } } } }`,
		map[string]any{"id": walWalletGID(demoWalletUSD)}).decode(t, &got)
	assert.Equal(t, "Main USD", got.Node.Name)
	assert.Equal(t, "Demo Corp", got.Node.Corporation.Name)
	assert.Nil(t, got.Node.Pending, "no pending wallet before the first movement")
	assert.Equal(t, 1, h.banking.corporations.calls("List"), "the corporation is read once, for the id and the edge")
}

// A global id of another type where a wallet is expected is NOT_FOUND
// before any upstream call; a raw upstream id is accepted.
func TestWalletArgumentsTakeWalletIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(staff)
	q := `query($w: ID!) { sepaEnabled(sourceWalletId: $w, iban: "LV80BANK0000435195001") }`
	resp := h.exec(q, map[string]any{"w": relay.ID(relay.Card, "card-1")})
	assert.Equal(t, "NOT_FOUND", resp.code(t))
	h.walNoCalls("a card id as a wallet")
	h.exec(q, map[string]any{"w": demoWalletEUR}).noErrors(t)
	assert.Equal(t, 1, h.banking.lookup.calls("IsSEPAEnabled"))
}

// sepaEnabled checks the IBAN's format and checksum first (no upstream
// call for a bad one) and asks the upstream with the IBAN normalised.
func TestSepaEnabledChecksTheIBANFirst(t *testing.T) {
	t.Parallel()
	q := `query($w: ID!, $iban: String!) { sepaEnabled(sourceWalletId: $w, iban: $iban) }`
	for _, bad := range []string{"", "   ", "LV80", "1234BANK0000435195001", "LV81BANK0000435195001"} {
		h := newHarness(t)
		refused(t, h.as(person).exec(q, map[string]any{"w": walWalletGID(demoWalletEUR), "iban": bad}), "BAD_USER_INPUT", "iban")
		h.walNoCalls("iban " + bad)
	}
	h := newHarness(t)
	refused(t, h.as(person).exec(q, map[string]any{"w": " ", "iban": "LV80BANK0000435195001"}), "BAD_USER_INPUT", "sourceWalletId")
	h.walNoCalls("blank wallet")

	h.banking.lookup.sepa["LV80BANK0000435195001"] = true
	var got struct{ SepaEnabled bool }
	h.exec(q, map[string]any{"w": walWalletGID(demoWalletEUR), "iban": "lv80 bank 0000 4351 9500 1"}).decode(t, &got)
	assert.True(t, got.SepaEnabled, "the printed, lower-case form is asked normalised")
	h.exec(q, map[string]any{"w": walWalletGID(demoWalletEUR), "iban": "DE89370400440532013000"}).decode(t, &got)
	assert.False(t, got.SepaEnabled)

	h.banking.lookup.failNext("IsSEPAEnabled", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "iban", "iban length is wrong for LV"))
	e := h.exec(q, map[string]any{"w": walWalletGID(demoWalletEUR), "iban": "LV80BANK0000435195001"}).only(t)
	assert.Equal(t, "UPSTREAM_REJECTED", e.Code())
	assert.Equal(t, "iban", e.Upstream()["field"])
	assert.True(t, strings.Contains(e.Message, "length"), e.Message)
}
