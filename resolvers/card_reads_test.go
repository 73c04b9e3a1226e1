package resolvers

import (
	"encoding/json"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Persons and wallets of the card tests.
const (
	benPerson   = "person-ben"
	olgaPerson  = "person-olga"
	cardWallet  = "wallet-card"
	otherWallet = "wallet-other"
)

// olga is an API client of the other corporation.
var olgaKey = principal{kind: session.APIClient, id: "key-olga", corporationID: otherCorp}

// withCards seeds two cards of the demo corporation (card-a, Anna's, funded
// by its CARD wallet; card-b, Ben's, with values the gateway does not
// know) and one of the other corporation (card-o, Olga's).
func withCards(h *harness) {
	b := h.banking
	b.persons.add(demoCorp, &bankingPerson{ID: benPerson, FirstName: "Ben", LastName: "Demo", Email: "ben@demo.test"})
	b.persons.add(otherCorp, &bankingPerson{ID: olgaPerson, FirstName: "Olga", LastName: "Other", Email: "olga@other.test"})
	card := "CARD"
	b.wallets.add(demoCorp, &bankingWallet{ID: cardWallet, Name: "Cards", Currency: "EUR", Type: "real", Amount: 10_000, Adapter: "adapter_a", Purpose: &card})
	b.wallets.add(otherCorp, &bankingWallet{ID: otherWallet, Name: "Theirs", Currency: "EUR", Type: "real", Amount: 5_000, Adapter: "adapter_a", Purpose: &card})
	region := "Vidzeme"
	at := banking.Timestamp{Time: time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)}
	b.cards.addTo(demoCorp, &banking.Card{ID: "card-a", Status: "ACTIVE", Type: "VIRTUAL", Brand: "MASTERCARD", Region: "EUROPE", Currency: "EUR",
		AvailableBalance: 7_500, Expiry: banking.CardExpiry{Year: "2030", Month: "07"}, DisplayName: "Travel", FundingSourceID: cardWallet,
		Address:      &banking.CardAddress{Street: "Brivibas 1", City: "Riga", PostCode: "LV-1010", Country: "LV", Region: &region},
		EmbossedData: &banking.EmbossedData{FirstName: "Anna", LastName: "Demo", CompanyName: "Demo Corp"},
		Cardholder:   banking.CardholderRef{ExternalID: demoPerson, ID: "issuer-holder-a"},
		PAN:          banking.MaskedPAN{BIN: "555544", LastFour: "4242"}, CreatedAt: at, ModifiedAt: at})
	b.cards.addTo(demoCorp, &banking.Card{ID: "card-b", Status: "FROZEN", Type: "plastic", Brand: "amex", Currency: "EUR",
		Expiry: banking.CardExpiry{Year: "20x0", Month: ""}, FundingSourceID: demoWalletEUR, Cardholder: banking.CardholderRef{ExternalID: benPerson}})
	b.cards.addTo(otherCorp, &banking.Card{ID: "card-o", Status: "ACTIVE", Type: "VIRTUAL", Brand: "MASTERCARD", Currency: "EUR",
		FundingSourceID: otherWallet, Cardholder: banking.CardholderRef{ExternalID: olgaPerson}})
}

func walCardGID(id string) string { return relay.ID(relay.Card, id) }

type cardIDs struct {
	Cards []struct{ UpstreamID string }
}

func (c cardIDs) ids() []string {
	out := []string{}
	for _, x := range c.Cards {
		out = append(out, x.UpstreamID)
	}
	sort.Strings(out)
	return out
}

// A card as the graph shows it: values the spec does not list read as the
// closest safe value (a status nobody knows cannot be spent with), its
// funding wallet, cardholder and corporation by their ids and edges, and
// its address and embossing.
func TestCardsAreMapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	var got struct {
		Cards []struct {
			ID, UpstreamID, Status, Type, Brand, Region, Currency string
			DisplayName, EmbossedName, EmbossedCompanyName        *string
			IssuerCardholderID                                    *string
			ExpiryMonth, ExpiryYear                               int
			AvailableBalance                                      struct{ Amount int64 }
			MaskedPan                                             struct{ Bin, LastFour string }
			CreatedAt, UpdatedAt                                  *string
			FundingWalletID, CardholderID                         string
			FundingWallet                                         *struct{ ID, Name string }
			Cardholder                                            *struct{ FirstName string }
			Corporation                                           *struct{ Name string }
			Address                                               *struct {
				Street, City, PostCode, Country string
				Region                          *string
			}
		}
	}
	h.as(person).exec(`{ cards { id upstreamId status type brand region currency displayName embossedName embossedCompanyName
	  issuerCardholderId expiryMonth expiryYear availableBalance { amount } maskedPan { bin lastFour } createdAt updatedAt
	  fundingWalletId cardholderId fundingWallet { id name } cardholder { firstName } corporation { name }
	  address { street city postCode country region } } }`, nil).decode(t, &got)
	require.Len(t, got.Cards, 2)
	a, b := got.Cards[0], got.Cards[1]
	assert.Equal(t, walCardGID("card-a"), a.ID)
	assert.Equal(t, "ACTIVE", a.Status)
	assert.Equal(t, "Travel", *a.DisplayName)
	assert.Equal(t, "Anna Demo", *a.EmbossedName)
	assert.Equal(t, "Demo Corp", *a.EmbossedCompanyName)
	assert.Equal(t, "issuer-holder-a", *a.IssuerCardholderID)
	assert.Equal(t, 7, a.ExpiryMonth)
	assert.Equal(t, 2030, a.ExpiryYear)
	assert.Equal(t, int64(7_500), a.AvailableBalance.Amount)
	assert.Equal(t, "4242", a.MaskedPan.LastFour)
	assert.Equal(t, "2025-02-03T04:05:06Z", *a.UpdatedAt)
	assert.Equal(t, walWalletGID(cardWallet), a.FundingWalletID)
	assert.Equal(t, relay.ID(relay.Person, demoPerson), a.CardholderID)
	require.NotNil(t, a.FundingWallet)
	assert.Equal(t, walWalletGID(cardWallet), a.FundingWallet.ID)
	assert.Equal(t, "Cards", a.FundingWallet.Name)
	assert.Equal(t, "Anna", a.Cardholder.FirstName)
	assert.Equal(t, "Demo Corp", a.Corporation.Name)
	require.NotNil(t, a.Address)
	assert.Equal(t, "Vidzeme", *a.Address.Region)

	assert.Equal(t, "INACTIVE", b.Status, "a status the gateway does not know cannot be spent with")
	assert.Equal(t, "VIRTUAL", b.Type)
	assert.Equal(t, "MASTERCARD", b.Brand)
	assert.Zero(t, b.ExpiryMonth, "an unreadable expiry is 0, not an error")
	assert.Nil(t, b.DisplayName)
	assert.Nil(t, b.EmbossedName)
	assert.Nil(t, b.EmbossedCompanyName)
	assert.Nil(t, b.IssuerCardholderID)
	assert.Nil(t, b.Address)
	assert.Nil(t, b.CreatedAt)
	assert.Equal(t, "Ben", b.Cardholder.FirstName)
	assert.Equal(t, walWalletGID(demoWalletEUR), b.FundingWalletID)

	assert.Equal(t, 1, h.banking.cards.calls("List"))
	assert.Equal(t, 1, h.banking.persons.calls("List"), "the cardholders come from one person listing")
	assert.Equal(t, 1, h.banking.wallets.calls("List"), "the funding wallets from one wallet listing")
}

// Who sees which cards: a person and an API client their corporation's,
// staff every card (Corporation.cards finds a corporation's by its
// cardholders), an introducer none. A card outside the scope is null by
// card(id), NOT_FOUND by node, and never shown.
func TestCardsAreScopedToTheViewer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	list := func(who principal) []string {
		var got cardIDs
		h.as(who).exec(`{ cards { upstreamId } }`, nil).decode(t, &got)
		return got.ids()
	}
	assert.Equal(t, []string{"card-a", "card-b"}, list(person))
	assert.Equal(t, []string{"card-a", "card-b"}, list(apiClient))
	assert.Equal(t, []string{"card-o"}, list(olgaKey))
	assert.Equal(t, []string{"card-a", "card-b", "card-o"}, list(staff))
	assert.Equal(t, "FORBIDDEN", h.as(introducer).exec(`{ cards { upstreamId } }`, nil).code(t))

	h.as(person)
	var one struct{ Card *struct{ UpstreamID string } }
	h.exec(`query($id: ID!) { card(id: $id) { upstreamId } }`, map[string]any{"id": walCardGID("card-o")}).decode(t, &one)
	assert.Nil(t, one.Card, "another corporation's card is null")
	h.exec(`query($id: ID!) { card(id: $id) { upstreamId } }`, map[string]any{"id": "card-a"}).decode(t, &one)
	require.NotNil(t, one.Card, "a raw upstream id is accepted")
	resp := h.exec(`query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": walCardGID("card-o")})
	assert.Equal(t, "NOT_FOUND", resp.code(t))

	byCorp := func(who principal, corp string) []string {
		var got struct{ Corporation *cardIDs }
		h.as(who).exec(`query($c: ID!) { corporation(id: $c) { cards { upstreamId } } }`, map[string]any{"c": walCorpGID(corp)}).decode(t, &got)
		if got.Corporation == nil {
			return nil
		}
		return got.Corporation.ids()
	}
	assert.Equal(t, []string{"card-o"}, byCorp(staff, otherCorp))
	assert.Equal(t, []string{"card-a", "card-b"}, byCorp(staff, demoCorp))
	assert.Equal(t, []string{"card-a", "card-b"}, byCorp(person, demoCorp))
	assert.Nil(t, byCorp(person, otherCorp))

	var p struct {
		Person struct{ Cards []struct{ UpstreamID string } }
	}
	h.as(staff).exec(`query($id: ID!) { person(id: $id) { cards { upstreamId } } }`, map[string]any{"id": relay.ID(relay.Person, benPerson)}).decode(t, &p)
	require.Len(t, p.Person.Cards, 1)
	assert.Equal(t, "card-b", p.Person.Cards[0].UpstreamID, "a person's cards are the cards she holds")

	var w struct {
		Corporation struct {
			Wallet struct{ Cards []struct{ UpstreamID string } }
		}
	}
	h.as(person).exec(`query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { cards { upstreamId } } } }`,
		map[string]any{"c": walCorpGID(demoCorp), "w": walWalletGID(cardWallet)}).decode(t, &w)
	require.Len(t, w.Corporation.Wallet.Cards, 1)
	assert.Equal(t, "card-a", w.Corporation.Wallet.Cards[0].UpstreamID, "a wallet's cards are the cards it funds")
}

// Staff see another corporation's card with its own corporation's edges:
// the funding wallet's id names the cardholder's corporation.
func TestStaffSeeACardsOwnCorporation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	var got struct {
		Card struct {
			FundingWalletID string
			FundingWallet   struct{ Name string }
			Corporation     struct{ Name string }
		}
	}
	h.as(staff).exec(`query($id: ID!) { card(id: $id) { fundingWalletId fundingWallet { name } corporation { name } } }`,
		map[string]any{"id": walCardGID("card-o")}).decode(t, &got)
	assert.Equal(t, relay.ID(relay.Wallet, otherCorp, otherWallet), got.Card.FundingWalletID)
	assert.Equal(t, "Theirs", got.Card.FundingWallet.Name)
	assert.Equal(t, "Other Corp", got.Card.Corporation.Name)
}

// card(id) checks its id before any call; the upstream's errors on the
// card listing fail the field with their code.
func TestCardReadErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	h.as(person)
	refused(t, h.exec(`{ card(id: " ") { id } }`, nil), "BAD_USER_INPUT", "id")
	assert.Equal(t, "NOT_FOUND", h.exec(`query($id: ID!) { card(id: $id) { id } }`, map[string]any{"id": walWalletGID(cardWallet)}).code(t))
	assert.Zero(t, h.banking.cards.calls("Get"))

	h.banking.cards.failNext("List", bankingRejection(http.StatusBadGateway, 0, "", "upstream stack"))
	e := h.exec(`{ cards { id } }`, nil).only(t)
	assert.Equal(t, "UPSTREAM_UNAVAILABLE", e.Code())
	assert.NotContains(t, e.Message, "stack")

	h.banking.cards.failNext("Get", bankingRejection(http.StatusTooManyRequests, 0, "", "slow down"))
	assert.Equal(t, "RATE_LIMITED", h.exec(`{ card(id: "card-a") { id } }`, nil).code(t))
}

const cardTxPage = `query($id: ID!, $first: Int, $after: String, $dir: SortDirection) { card(id: $id) {
  transactions(first: $first, after: $after, sortDirection: $dir) {
    edges { cursor node { id upstreamId type amount { amount currency } status state statusCode authorisationCode authorisationName
      errorCode errorName description createdAt } }
    pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } } }`

type cardTxAnswer struct {
	Card struct {
		Transactions struct {
			Edges []struct {
				Node struct {
					ID, UpstreamID, Type, State                  string
					Amount                                       struct{ Amount int64 }
					Status, AuthorisationCode, AuthorisationName *string
					ErrorName, Description, CreatedAt            *string
					StatusCode, ErrorCode                        *int
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

// withCardTransactions lists three transactions of card-a, newest first:
// an approval, a decline with a transaction error code, and one whose
// status the upstream gave unshaped.
func withCardTransactions(h *harness) {
	at := func(d int) banking.Timestamp {
		return banking.Timestamp{Time: time.Date(2025, 6, d, 12, 0, 0, 0, time.UTC)}
	}
	h.banking.cards.data.Lock()
	defer h.banking.cards.data.Unlock()
	h.banking.cards.transactions["card-a"] = []*banking.CardTransaction{
		{ID: "ct-3", Type: "card-transaction", SourceAmount: 300, SourceCurrency: "EUR", Status: json.RawMessage(`"settled"`), CreatedAt: at(3)},
		{ID: "ct-2", Type: "card-transaction", SourceAmount: 200, SourceCurrency: "EUR", CreatedAt: at(2),
			Status: json.RawMessage(`{"code":10,"name":"DECLINED","error_code":-117}`), Meta: json.RawMessage(`{"description":"Shop","authorisation_code":"05"}`)},
		{ID: "ct-1", Type: "card-transaction", SourceAmount: 100, SourceCurrency: "EUR", CreatedAt: at(1),
			Status: json.RawMessage(`{"code":0,"name":"APPROVED"}`), Meta: json.RawMessage(`{"authorisation_code":"00"}`)},
	}
}

// A card's transactions page on with their cursors; each one's status is
// read from what the upstream gave, unshaped or not.
func TestCardTransactions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	withCardTransactions(h)
	h.as(person)
	var p1, p2 cardTxAnswer
	h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 2}).decode(t, &p1)
	tx := p1.Card.Transactions
	require.Len(t, tx.Edges, 2)
	assert.Equal(t, 3, tx.TotalCount)
	assert.True(t, tx.PageInfo.HasNextPage)
	odd, declined := tx.Edges[0].Node, tx.Edges[1].Node
	assert.Equal(t, relay.ID(relay.CardTransaction, "card-a", "ct-3"), odd.ID)
	assert.Equal(t, "UNKNOWN", odd.State, "an unshaped status")
	assert.Nil(t, odd.StatusCode)
	assert.Nil(t, odd.AuthorisationCode)
	assert.Equal(t, "DECLINED", declined.State)
	assert.Equal(t, 10, *declined.StatusCode)
	assert.Equal(t, "DECLINED", *declined.Status)
	assert.Equal(t, -117, *declined.ErrorCode)
	assert.Equal(t, "CORPORATION_AMOUNT_REACHED", *declined.ErrorName)
	assert.Equal(t, "05", *declined.AuthorisationCode)
	assert.Equal(t, "DO_NOT_HONOUR", *declined.AuthorisationName)
	assert.Equal(t, "Shop", *declined.Description)
	assert.Equal(t, int64(200), declined.Amount.Amount)

	h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 2, "after": *tx.PageInfo.EndCursor}).decode(t, &p2)
	require.Len(t, p2.Card.Transactions.Edges, 1)
	last := p2.Card.Transactions.Edges[0].Node
	assert.Equal(t, "ct-1", last.UpstreamID)
	assert.Equal(t, "APPROVED", last.State)
	assert.Equal(t, "APPROVED", *last.AuthorisationName)
	assert.False(t, p2.Card.Transactions.PageInfo.HasNextPage)
	assert.True(t, p2.Card.Transactions.PageInfo.HasPreviousPage)

	var asc cardTxAnswer
	h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 1, "dir": "ASC"}).decode(t, &asc)
	assert.Equal(t, "ct-1", asc.Card.Transactions.Edges[0].Node.UpstreamID)

	before := h.banking.cards.calls("Transactions")
	refused(t, h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 2, "after": *asc.Card.Transactions.PageInfo.EndCursor}), "BAD_USER_INPUT", "after")
	refused(t, h.exec(cardTxPage, map[string]any{"id": walCardGID("card-b"), "first": 2, "after": *tx.PageInfo.EndCursor}), "BAD_USER_INPUT", "after")
	refused(t, h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 101}), "BAD_USER_INPUT", "first")
	assert.Equal(t, before, h.banking.cards.calls("Transactions"), "refused pages cost no call")

	var node struct{ Node struct{ UpstreamID string } }
	h.exec(`query($id: ID!) { node(id: $id) { ... on CardTransaction { upstreamId } } }`, map[string]any{"id": relay.ID(relay.CardTransaction, "card-a", "ct-2")}).decode(t, &node)
	assert.Equal(t, "ct-2", node.Node.UpstreamID)
}

// Against an upstream without offset paging only the first page of a
// card's transactions is served; the next is a client error that costs no
// call.
func TestCardTransactionsInStrictMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	withCards(h)
	withCardTransactions(h)
	h.banking.specOnly = true
	h.as(person)
	var p1 cardTxAnswer
	h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 2}).decode(t, &p1)
	require.True(t, p1.Card.Transactions.PageInfo.HasNextPage)
	refused(t, h.exec(cardTxPage, map[string]any{"id": walCardGID("card-a"), "first": 2, "after": *p1.Card.Transactions.PageInfo.EndCursor}), "BAD_USER_INPUT", "after")
	assert.Equal(t, 1, h.banking.cards.calls("Transactions"))
}
