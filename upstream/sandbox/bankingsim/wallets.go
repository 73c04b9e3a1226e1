package bankingsim

import (
	"net/http"
	"sort"
	"time"

	"github.com/go-chi/chi/v5"
)

// Wallet types and the processor adapters (their wire values, DESIGN.md
// "Adapter names").
const (
	WalletReal    = "real"
	WalletPending = "pending"

	AdapterA = "adapter_a"
	AdapterB = "adapter_b" // deprecated
	AdapterC = "adapter_c"

	// PurposeCard lets a wallet fund cards.
	PurposeCard = "CARD"
)

// Currencies are the six currencies of the spec.
var Currencies = []string{"USD", "EUR", "GBP", "SEK", "DKK", "NOK"}

// wallet is a Corporation Wallet. Amount is kept in integer minor units
// (cents), the spec's "indivisible currency units", so no float ever
// touches money.
type wallet struct {
	ID, CorpID, Name, Currency, Adapter string
	Purpose                             *string
	Type                                string // real or pending
	Amount                              int64
	// PendingID links a real wallet to its pending wallet, which exists only
	// after the first transaction from or to it; RealID is the way back.
	PendingID, RealID string
	// RequisiteIDs are the requisites attached to the wallet, oldest first.
	RequisiteIDs     []string
	CreatedBy        *actor
	CreatedByLoginID string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// setUp is false while a wallet created for manual requisites has none:
	// such a wallet cannot move money (20004).
	setUp bool
	// ledger is every movement of the wallet, oldest first: statements are
	// built from it, and the seed derives the balance from it.
	ledger []entry
}

// entry is one movement of a wallet.
type entry struct {
	At          time.Time
	TxID        string
	Type        string // transfer-incoming, transfer-outgoing, convert, invoice-payment, reservation, ...
	Description string
	Amount      int64 // signed minor units
	Balance     int64 // balance after the movement
}

// requisite is a Corporation Wallet Requisites record.
type requisite struct {
	ID, CorpID, Number, Code, Type, Adapter, WalletID string
	CreatedAt, UpdatedAt                              time.Time
}

func (q *requisite) json(identityID string) map[string]any {
	return map[string]any{"id": q.ID, "number": q.Number, "code": q.Code, "type": q.Type,
		"identity_id": identityID, "created_at": ts(q.CreatedAt), "updated_at": ts(q.UpdatedAt)}
}

// bankAddress is the sandbox bank of each adapter (the spec's bank_address
// object; its values are not shown, these are ours).
var bankAddress = map[string]map[string]any{
	AdapterA: {"name": "Sandbox Bank A", "street": "Elizabetes iela 1", "postCode": "LV-1010", "city": "Riga", "country": "LV"},
	AdapterB: {"name": "Sandbox Bank B", "street": "1 Bank Street", "postCode": "E14 5AB", "city": "London", "country": "GB"},
	AdapterC: {"name": "Sandbox Bank C", "street": "Gedimino pr. 1", "postCode": "01103", "city": "Vilnius", "country": "LT"},
}

// walletJSONLocked renders a wallet with its pending wallet and requisites
// inline, the way the spec's field table lists them.
func (s *Sim) walletJSONLocked(wl *wallet) map[string]any {
	c := s.corporations[wl.CorpID]
	identity := ""
	if c != nil {
		identity = c.IdentityID
	}
	var pending any
	if p := s.wallets[wl.PendingID]; p != nil {
		pending = map[string]any{"id": p.ID, "amount": p.Amount, "currency": p.Currency, "type": WalletPending,
			"name": p.Name, "created_at": ts(p.CreatedAt), "updated_at": ts(p.UpdatedAt)}
	}
	reqs := []any{}
	for _, id := range wl.RequisiteIDs {
		if q := s.requisites[id]; q != nil {
			reqs = append(reqs, map[string]any{"id": q.ID, "number": q.Number, "code": q.Code, "type": q.Type})
		}
	}
	var purpose any
	if wl.Purpose != nil {
		purpose = *wl.Purpose
	}
	out := map[string]any{
		"id": wl.ID, "amount": wl.Amount, "type": wl.Type, "name": wl.Name, "currency": wl.Currency,
		"payment_processor_adapter": wl.Adapter, "identity_id": identity, "pending": pending,
		"created_by": wl.CreatedBy, "bank_address": bankAddress[wl.Adapter], "wallet_requisites": reqs,
		"purpose": purpose, "created_by_login_id": wl.CreatedByLoginID,
		"created_at": ts(wl.CreatedAt), "updated_at": ts(wl.UpdatedAt),
	}
	if wl.Type == WalletPending {
		out["real_wallet_id"] = wl.RealID
	}
	return out
}

func (s *Sim) walletRoutes(r chi.Router) {
	r.Get("/corporations/{id}/wallets", s.listWallets)
	r.Get("/corporations/{id}/wallets/{walletId}", s.getWallet)
}

// corporationWalletsLocked returns the real wallets of a corporation, oldest
// first; pending wallets travel inside their real wallet.
func (s *Sim) corporationWalletsLocked(corpID string) []*wallet {
	var out []*wallet
	for _, wl := range s.wallets {
		if wl.CorpID == corpID && wl.Type == WalletReal {
			out = append(out, wl)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// listWallets answers the corporation's real wallets. Staff see every
// corporation, persons and API clients their own (others 404, like
// corporations themselves).
func (s *Sim) listWallets(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	out := []any{}
	for _, wl := range s.corporationWalletsLocked(c.ID) {
		out = append(out, s.walletJSONLocked(wl))
	}
	writeJSON(w, http.StatusOK, out)
}

// getWallet answers one wallet of the corporation, real or pending.
func (s *Sim) getWallet(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	wl := s.wallets[chi.URLParam(r, "walletId")]
	if wl == nil || wl.CorpID != c.ID {
		notFound(w, "wallet")
		return
	}
	writeJSON(w, http.StatusOK, s.walletJSONLocked(wl))
}

// postLocked books a movement on a wallet and keeps its balance.
func (wl *wallet) postLocked(at time.Time, txID, typ, desc string, amount int64) {
	wl.Amount += amount
	wl.UpdatedAt = at
	wl.ledger = append(wl.ledger, entry{At: at, TxID: txID, Type: typ, Description: desc, Amount: amount, Balance: wl.Amount})
}

func sortRequisites(list []*requisite) {
	sort.Slice(list, func(i, j int) bool {
		if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
			return list[i].CreatedAt.Before(list[j].CreatedAt)
		}
		return list[i].ID < list[j].ID
	})
}
