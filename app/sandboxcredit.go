package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// maxSandboxCredit bounds one credit from the dashboard's button (minor
// units): a demonstration, not a way to fill a wallet to the upstream's
// limit.
const maxSandboxCredit = 100_000_00

// sandboxCreditBody tells a client what body POST /sandbox/credit takes.
const sandboxCreditBody = `send a JSON body: {"walletId": "<Wallet id>", "amount": 1000}`

// sandboxCredit is POST /sandbox/credit, registered only when the sandbox
// runs in-process, like POST /sandbox/trigger: it books an incoming transfer
// on a wallet of the signed-in principal's own corporation through the
// sandbox's control API (POST /_sandbox/banking/wallets/:id/credit), so the
// change happens outside the gateway, as a transfer from another bank would,
// and a dashboard can show the banking poller announcing it.
//
// The body is {"walletId": "<global Wallet id>", "amount": <minor units>}.
// The wallet must be the session's own corporation's: the id's corporation
// is compared with the session's, and the wallet is read from the banking
// upstream with the session's own credentials, so the upstream's scoping
// decides as it does for every read. Only principals of one corporation
// (persons and its API clients) may credit; anyone else is FORBIDDEN, a
// wallet of another corporation NOT_FOUND (it says nothing about whether
// the wallet exists). The control API stays on the sandbox's loopback
// address: the validated request goes to the in-process handler directly.
// The answer is the wallet's global id and new balance (creditAnswer).
func sandboxCredit(sb http.Handler, bank *banking.Client) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := session.From(r.Context())
		if sess == nil {
			gqlerr.WriteHTTP(w, http.StatusUnauthorized, gqlerr.Unauthenticated, "sign in to credit a wallet")
			return
		}
		if sess.CorporationID == "" || (sess.Kind != session.Person && sess.Kind != session.APIClient) {
			gqlerr.WriteHTTP(w, http.StatusForbidden, gqlerr.Forbidden, "only a person or an API client of a corporation may credit its wallets")
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			gqlerr.WriteHTTP(w, http.StatusUnsupportedMediaType, gqlerr.BadUserInput, sandboxCreditBody)
			return
		}
		var in struct {
			WalletID string `json:"walletId"`
			Amount   int64  `json:"amount"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&in); err != nil {
			gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, sandboxCreditBody)
			return
		}
		if in.Amount < 1 || in.Amount > maxSandboxCredit {
			gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, fmt.Sprintf("amount must be a whole number of minor units from 1 to %d", maxSandboxCredit))
			return
		}
		ref, err := relay.Decode(in.WalletID)
		if err != nil || ref.Kind != relay.Wallet {
			gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, "walletId must be the id of a Wallet")
			return
		}
		if ref.Parent() != sess.CorporationID {
			gqlerr.WriteHTTP(w, http.StatusNotFound, gqlerr.NotFound, "no wallet of your corporation has this id")
			return
		}
		wl, err := bank.Wallets.Get(r.Context(), sess.CorporationID, ref.Upstream())
		switch {
		case banking.IsUnauthorized(err):
			gqlerr.WriteHTTP(w, http.StatusUnauthorized, gqlerr.Unauthenticated, "the session ended: sign in again")
			return
		case banking.IsNotFound(err) || banking.IsForbidden(err):
			gqlerr.WriteHTTP(w, http.StatusNotFound, gqlerr.NotFound, "no wallet of your corporation has this id")
			return
		case err != nil:
			gqlerr.WriteHTTP(w, http.StatusBadGateway, gqlerr.UpstreamUnavailable, "the banking upstream did not answer")
			return
		case wl.Type != banking.WalletTypeReal:
			gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, "only a real wallet can be credited")
			return
		}
		body, _ := json.Marshal(map[string]any{"amount": in.Amount, "description": "Sandbox credit from the dashboard"})
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "/_sandbox/banking/wallets/"+url.PathEscape(ref.Upstream())+"/credit", bytes.NewReader(body))
		if err != nil {
			gqlerr.WriteHTTP(w, http.StatusInternalServerError, gqlerr.Internal, gqlerr.InternalMessage)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, req)
		writeCredited(w, rec, sess.CorporationID)
	}
}

// creditAnswer is what POST /sandbox/credit answers: the wallet by its
// global id and its balance after the credit. The sandbox's own answer is
// its raw wallet (the staff member who created it, internal ids, bank
// details), more than the caller's graph shows; none of it is passed on.
type creditAnswer struct {
	WalletID string `json:"walletId"`
	Balance  struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"balance"`
}

// writeCredited answers from the sandbox's reply to the credit: only the
// wallet's id and balance, or a code when the sandbox refused it.
func writeCredited(w http.ResponseWriter, rec *httptest.ResponseRecorder, corporationID string) {
	var wl banking.Wallet
	switch {
	case rec.Code == http.StatusBadRequest || rec.Code == http.StatusUnprocessableEntity:
		gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, "the sandbox refused this credit (the balance would pass its bound)")
		return
	case rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &wl) != nil || wl.ID == "":
		gqlerr.WriteHTTP(w, http.StatusBadGateway, gqlerr.UpstreamUnavailable, "the sandbox did not book the credit")
		return
	}
	var out creditAnswer
	out.WalletID = relay.ID(relay.Wallet, corporationID, wl.ID)
	out.Balance.Amount, out.Balance.Currency = wl.Amount, wl.Currency
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
