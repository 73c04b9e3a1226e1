package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Every transaction status, card authorisation code and transaction error
// code of the banking spec, produced by the sandbox's control API
// (POST /_sandbox/cards/{id}/transactions, .../reverse) and read back
// through the graph on Card.transactions.

// specTransactionStatuses is the spec's table of a transaction's
// authorization codes.
var specTransactionStatuses = map[int]string{
	0: "APPROVED", 1: "AUTHORIZED", 10: "DECLINED", 21: "REFUNDED", 22: "HOLD", 30: "REJECTED",
	40: "PENDING", 41: "PENDING_AUTH", 42: "UNDER_REVIEW", 43: "INITIALIZED",
}

// specTransactionErrors is the banking spec's table of transaction error
// codes, copied from the spec for this test.
var specTransactionErrors = map[int]string{
	101: "PICK_UP", 1300: "INVALID_DATA_FORMAT", 1301: "INVALID_OR_INCOMPLETE_DATA_PROVIDED",
	1310: "INVALID_AMOUNT", 1318: "INVALID_DATE", 1320: "INVALID_CURRENCY_CODE", 1322: "INVALID_CUSTOMER_DATA",
	1330: "INVALID_ACCOUNT", 1352: "INVALID_AGENT", 1360: "BAD_PROCESSING_CODE",
	1385: "INVALID_BANK_OPERATION_CODE", 1392: "INVALID_REFERENCE", 1393: "TRANSACTION_CANNOT_BE_COMPLETED",
	5100: "GENERIC_DECLINE", 5101: "DECLINED_BY_PERSON", 5120: "INSUFFICIENT_FUNDS",
	5121: "AMOUNT_EXCEED_LIMIT", 5141: "CLOSED_ACCOUNT_NUMBER", 5160: "UNAUTHORIZED_USER", 5161: "UNAUTHORIZED",
	5173: "ACCOUNT_TYPE_INVALID", 5200: "DUPLICATE_TRANSACTION", 5450: "WRONG_IBAN",
	5501: "SYSTEM_VELOCITY_REACHED", 5700: "TRANSACTION_NOT_PERMITTED", 5701: "NO_TRANSACTION",
	5800: "REVERSAL_REJECTED", 5801: "CANCELLATION_REQUEST", 5802: "FINAL_RESPONSE_MANDATE_CANCELLED",
	5803: "NO_MANDATE", 5804: "RETURN_FUNDS", 5805: "RETURN_AFTER_INVESTIGATION", 6301: "ACCOUNT_IN_BLACKLIST",
	6303: "WHITELIST_VALIDATION_ERROR", 6400: "SPECIFIC_SERVICE_OFFERED", 7710: "AUTHENTICATION_FAILED",
	7721: "AUTHORISATION_WAITING", 7730: "AUTHORISED_AND_CANCELLED", 8000: "PROCESSOR_SYSTEM_ERROR",
	8040: "CUT_OFF_TIME", 8100: "FATAL_COMMUNICATION_ERROR", 9110: "TRANSACTION_DECLINED",
	9500: "SUSPECTED_FRAUD", 9505: "PAYMENT_DATA_ARE_BLOCKED", 9542: "BANK_NOT_SUPPORTED",
	9544: "BANK_NOT_REGISTERED_UNDER_BIC", 9600: "UNRECOGNIZED_RESPONSE_CODE",
	9610: "UNRECOGNIZED_INITIAL_PARTY", 9620: "UNKNOWN_END_CUSTOMER", 9621: "DECEASED_END_CUSTOMER",
	9630: "UNKNOWN_REASON", 9631: "REASON", 9700: "BALANCE_REQUEST", 9800: "HTTP_ERROR",
	9900: "TECHNICAL_PROBLEM", -100: "TRANSACTION_SCORE_TOO_LOW", -114: "CORPORATION_LIMIT_REACHED",
	-115: "CORPORATION_VELOCITY_REACHED", -116: "CORPORATION_ATTEMPT_VELOCITY_PER_HOUR_REACHED",
	-117: "CORPORATION_AMOUNT_REACHED", -118: "CORPORATION_AMOUNT_BELOW_MIN",
	-119: "CORPORATION_AMOUNT_ABOVE_MAX", -300: "PAYMENT_PROCESSOR_NOT_FOUND", -420: "TOTAL_CARD_LIMIT_REACHED",
}

// specCardAuthorisations is the banking spec's table of card
// authorisation codes, copied from the spec for this test.
var specCardAuthorisations = map[string]string{
	"00": "APPROVED", "01": "REFER_TO_CARD_ISSUER", "02": "REFER_TO_CARD_ISSUER_SPECIAL",
	"03": "INVALID_MERCHANT", "04": "PICK_UP_CARD", "05": "DO_NOT_HONOUR", "06": "ERROR",
	"07": "PICK_UP_CARD_SPECIAL", "09": "REQUEST_IN_PROGRESS", "12": "INVALID_TRANSACTION",
	"13": "INVALID_AMOUNT", "14": "INVALID_CARD_NUMBER", "19": "REENTER_TRANSACTION", "21": "NO_ACTION_TAKEN",
	"30": "FORMAT_ERROR", "41": "LOSR_CARD_PICK_UP", "43": "STOLEN_CARD_PICK_UP", "51": "NOT_SUFFICENT_FUNDS",
	"52": "NO_CHECKING_ACCOUNT", "53": "NO_SAVING_ACCOUNTS", "54": "EXPIRED_CARD", "55": "PIN_INCORRECT",
	"57": "TRANSACTION_NOT_ALLOWED_FOR_CARDHOLDER", "58": "TRANSACTION_NOT_ALLOWED_FOR_MERCHANT",
	"61": "EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT", "62": "RESTRICTED_CARD", "63": "SECURITY_VIOLATION",
	"65": "ACTIVITY_COUNT_LIMIT_EXCEEDED", "75": "PIN_RETRIES_EXCEEDED", "77": "INCONSISTENT_WITH_ORIGINAL",
	"78": "NO_ACCOUNT", "84": "PREAUTHORISATION_TIME_TOO_GREAT", "86": "CANNOT_VERIFY_PIN",
	"91": "ISSUER_UNAVAILABLE", "92": "INVALID_RECEVING_INSTITUTION_ID", "93": "TRANSACTION_VIOLATES_LAW",
	"94": "DUPLICATE_TRANSACTION", "96": "SYSTEM_MANLFUNCTION",
}

type cardTxView struct {
	UpstreamID        string  `json:"upstreamId"`
	Status            *string `json:"status"`
	State             string  `json:"state"`
	StatusCode        *int    `json:"statusCode"`
	AuthorisationCode *string `json:"authorisationCode"`
	AuthorisationName *string `json:"authorisationName"`
	ErrorCode         *int    `json:"errorCode"`
	ErrorName         *string `json:"errorName"`
	Amount            struct {
		Amount int64 `json:"amount"`
	} `json:"amount"`
}

// cardTransactions reads every transaction of a card through the graph,
// page by page, by upstream id.
func (g *testGateway) cardTransactions(t *testing.T, cardID string) map[string]cardTxView {
	t.Helper()
	out := map[string]cardTxView{}
	after := any(nil)
	for {
		var d struct {
			Card *struct {
				Transactions struct {
					Edges []struct {
						Node cardTxView `json:"node"`
					} `json:"edges"`
					PageInfo struct {
						HasNextPage bool   `json:"hasNextPage"`
						EndCursor   string `json:"endCursor"`
					} `json:"pageInfo"`
				} `json:"transactions"`
			} `json:"card"`
		}
		g.query(t, `query($id: ID!, $after: String) { card(id: $id) { transactions(first: 100, after: $after) {
		  edges { node { upstreamId status state statusCode authorisationCode authorisationName errorCode errorName amount { amount } } }
		  pageInfo { hasNextPage endCursor } } } }`, map[string]any{"id": cardID, "after": after}).decode(t, &d)
		if d.Card == nil {
			t.Fatalf("card %s not visible", cardID)
		}
		for _, e := range d.Card.Transactions.Edges {
			out[e.Node.UpstreamID] = e.Node
		}
		if !d.Card.Transactions.PageInfo.HasNextPage {
			return out
		}
		after = d.Card.Transactions.PageInfo.EndCursor
	}
}

func TestEveryTransactionAndCardCodeReadsThroughTheGraph(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	card := anna.issueCard(t, issueInput())
	book := func(body map[string]any) string {
		var tx struct {
			ID string `json:"id"`
		}
		g.sandbox(t, http.MethodPost, "/_sandbox/cards/"+rawID(card.ID)+"/transactions", body, &tx)
		return tx.ID
	}

	type want struct {
		state, authCode, authName, errName string
		statusCode, errCode                int
	}
	cases := map[string]want{} // transaction id -> what the graph must show
	names := map[string]string{}
	for code, name := range specTransactionStatuses {
		auth := "05"
		if code == 0 {
			auth = "00"
		}
		id := book(map[string]any{"amount": 1000 + code, "status": code, "code": auth})
		cases[id] = want{state: name, statusCode: code, authCode: auth, authName: specCardAuthorisations[auth]}
		names[id] = fmt.Sprintf("status %d %s", code, name)
	}
	for code, name := range specCardAuthorisations {
		status, state := 10, "DECLINED"
		if code == "00" {
			status, state = 0, "APPROVED"
		}
		id := book(map[string]any{"amount": 2000, "code": code})
		cases[id] = want{state: state, statusCode: status, authCode: code, authName: name}
		names[id] = "card code " + code + " " + name
	}
	for code, name := range specTransactionErrors {
		id := book(map[string]any{"amount": 3000, "status": 10, "code": "05", "error_code": code})
		cases[id] = want{state: "DECLINED", statusCode: 10, authCode: "05", authName: "DO_NOT_HONOUR", errCode: code, errName: name}
		names[id] = fmt.Sprintf("error %d %s", code, name)
	}

	// A reversed one: an approved simulation, reversed, gives its money back.
	before := anna.walletBalance(t, bankingsim.DemoCardWalletID)
	if s := anna.simulate(t, card.ID, 4200); s.Typename != "CardAuthorised" {
		t.Fatalf("simulation: %+v", s)
	}
	seen := anna.cardTransactions(t, card.ID)
	var simulated string
	for id := range seen {
		if _, booked := cases[id]; !booked {
			simulated = id
		}
	}
	if simulated == "" || seen[simulated].State != "APPROVED" {
		t.Fatalf("the simulated transaction is not listed as approved: %+v", seen[simulated])
	}
	g.sandbox(t, http.MethodPost, "/_sandbox/cards/"+rawID(card.ID)+"/transactions/"+simulated+"/reverse", nil, nil)
	cases[simulated] = want{state: "REFUNDED", statusCode: 21, authCode: "00", authName: "APPROVED"}
	names[simulated] = "a reversed simulation"
	if after := anna.walletBalance(t, bankingsim.DemoCardWalletID); after != before {
		t.Errorf("funding wallet %d before the simulation, %d after its reversal", before, after)
	}

	seen = anna.cardTransactions(t, card.ID)
	ids := make([]string, 0, len(cases))
	for id := range cases {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return names[ids[i]] < names[ids[j]] })
	for _, id := range ids {
		w := cases[id]
		t.Run(names[id], func(t *testing.T) {
			got, ok := seen[id]
			if !ok {
				t.Fatal("not listed")
			}
			if got.State != w.state || deref(got.Status) != w.state || deref(got.StatusCode) != w.statusCode ||
				deref(got.AuthorisationCode) != w.authCode || deref(got.AuthorisationName) != w.authName ||
				deref(got.ErrorCode) != w.errCode || deref(got.ErrorName) != w.errName {
				t.Fatalf("got %+v, want %+v", got, w)
			}
		})
	}
}
