package bankingsim

import (
	"math"
	"math/bits"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// DefaultSettleAfter is how long a conversion stays PENDING by default.
const DefaultSettleAfter = time.Minute

// Transaction creation codes (the spec's Errors rule 5).
const (
	CodeUnknownTransactionType = 20001
	CodeInsufficientFunds      = 20002
	CodeWalletNotFound         = 20003
	CodeWalletNotSetUp         = 20004
	CodeAmountBelowMinimum     = 20005
	CodeUnpaidInvoice          = 20006
	CodeAdapterANoConversion   = 20009
	CodeCurrencyNotAllowed     = 20010
	CodeTargetOnlyEUR          = 20011
	CodeSameAccount            = 20012
)

// Corporation limit codes (transaction error codes -114 to -119).
const (
	CodeCorporationLimitReached    = -114
	CodeCorporationVelocityReached = -115
	CodeCorporationAttemptVelocity = -116
	CodeCorporationAmountReached   = -117
	CodeCorporationAmountBelowMin  = -118
	CodeCorporationAmountAboveMax  = -119
)

// Authorization codes, which act as a transaction's states.
const (
	StatusApproved    = 0
	StatusAuthorized  = 1
	StatusDeclined    = 10
	StatusRefunded    = 21
	StatusHold        = 22
	StatusRejected    = 30
	StatusPending     = 40
	StatusPendingAuth = 41
	StatusUnderReview = 42
	StatusInitialized = 43
)

var statusNames = map[int]string{
	StatusApproved: "APPROVED", StatusAuthorized: "AUTHORIZED", StatusDeclined: "DECLINED",
	StatusRefunded: "REFUNDED", StatusHold: "HOLD", StatusRejected: "REJECTED", StatusPending: "PENDING",
	StatusPendingAuth: "PENDING_AUTH", StatusUnderReview: "UNDER_REVIEW", StatusInitialized: "INITIALIZED",
}

// MinConvertAmount is the spec's minimum convert amount per currency, in
// minor units.
var MinConvertAmount = map[string]int64{"EUR": 100, "USD": 200, "GBP": 100, "SEK": 1500, "NOK": 1500, "DKK": 800}

// Rates is the sandbox's fixed rate table: units of each currency per EUR,
// scaled by 1e6 (docs/sandbox-wallets.md, "Conversions"). Every currency has two decimals.
var Rates = map[string]int64{
	"EUR": 1_000_000, "USD": 1_080_000, "GBP": 850_000, "SEK": 11_500_000, "NOK": 11_700_000, "DKK": 7_460_000,
}

// ChargePermille is the conversion charge, in per mille of the source
// amount, rounded up to a whole minor unit.
const ChargePermille = 5

// MaxAmount is the largest amount the sandbox books, in minor units: a
// transaction's amount, a credit, a wallet's balance, a limit. It is
// 2^53-1, the largest integer a JSON number carries exactly to every
// reader; a bank refuses what it cannot book exactly, and with every amount
// below it no product or sum of the sandbox's arithmetic can wrap.
const MaxAmount = 1<<53 - 1

// incomingLocked is what the PENDING conversions into a wallet will credit
// it when they settle: a balance must stay within MaxAmount after them too.
func (s *Sim) incomingLocked(walletID string) int64 {
	var sum int64
	for _, t := range s.transactions {
		if t.Code == StatusPending && t.TargetWalletID == walletID {
			sum += t.TargetAmount
		}
	}
	return sum
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// wholeCents reads a JSON amount: a whole number of cents from 1 to
// MaxAmount.
func wholeCents(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < 1 || f > MaxAmount {
		return 0, false
	}
	return int64(f), true
}

// convertMinor converts an amount between currencies through the rate
// table, rounding half away from zero.
func convertMinor(amount int64, from, to string) int64 {
	if from == to {
		return amount
	}
	den := Rates[from]
	if amount < 0 {
		return -mulDiv(-amount, Rates[to], den, den/2)
	}
	return mulDiv(amount, Rates[to], den, den/2)
}

// convertMinorUp converts rounding up: what a source must give so that the
// target receives at least amount (amount >= 0).
func convertMinorUp(amount int64, from, to string) int64 {
	den := Rates[from]
	return mulDiv(amount, Rates[to], den, den-1)
}

// mulDiv is (a*b + add) / den for non-negative a, b, add and a positive
// den, computed in 128 bits: amount × rate overflows int64 from about 10^13
// cents, and a wrapped product once converted 184 billion USD for 2 cents.
// A quotient beyond int64 gives math.MaxInt64.
func mulDiv(a, b, den, add int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	var carry uint64
	lo, carry = bits.Add64(lo, uint64(add), 0)
	hi += carry
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// transaction is a Transaction. Amounts are minor units; Charge is in the
// source currency. Code is the authorization code, the transaction's state.
type transaction struct {
	ID, CorpID, Type                 string
	SourceWalletID, TargetWalletID   string
	SourceCurrency, TargetCurrency   string
	SourceAmount, TargetAmount       int64 // SourceAmount excludes the charge
	Charge                           int64
	Code                             int
	ErrorCode                        int // the reason of a REJECTED transaction
	AmountEUR                        int64
	CreatedAt, UpdatedAt             time.Time
	CreatedBy                        *actor
	PaymentMethod, TransactionTypeLm string // the limit it counts against
}

func (t *transaction) reserved() int64 { return t.SourceAmount + t.Charge }

// score is the sandbox's scoring of a transaction (the spec's rules are not
// shown): 100 less a point per 100 EUR it moves, at least 10.
func (t *transaction) score() float64 {
	var eur int64
	if Rates[t.TargetCurrency] != 0 {
		eur = convertMinor(t.TargetAmount, t.TargetCurrency, "EUR")
	}
	return float64(max(10, 100-eur/10_000))
}

// scoreRange names the scoring range a score falls in.
func scoreRange(score float64) string {
	switch {
	case score >= 80:
		return "score-range-low-risk"
	case score >= 50:
		return "score-range-medium-risk"
	}
	return "score-range-high-risk"
}

// successful is what the velocity and amount limits count.
func (t *transaction) successful() bool {
	switch t.Code {
	case StatusApproved, StatusAuthorized, StatusPending, StatusPendingAuth, StatusUnderReview, StatusHold:
		return true
	}
	return false
}

func walletRef(wl *wallet) any {
	if wl == nil {
		return nil
	}
	return map[string]any{"id": wl.ID, "name": wl.Name, "currency": wl.Currency, "type": wl.Type,
		"payment_processor_adapter": wl.Adapter}
}

func (s *Sim) transactionJSONLocked(t *transaction, creation bool) map[string]any {
	amountIn := map[string]any{}
	for _, cur := range Currencies {
		amountIn["amount_"+lower(cur)] = convertMinor(t.TargetAmount, t.TargetCurrency, cur)
		amountIn["charge_"+lower(cur)] = convertMinor(t.Charge, t.SourceCurrency, cur)
	}
	src, dst := s.wallets[t.SourceWalletID], s.wallets[t.TargetWalletID]
	identity := ""
	if c := s.corporations[t.CorpID]; c != nil {
		identity = c.IdentityID
	}
	var rate, chargeRate any
	if t.SourceCurrency != "" && t.TargetCurrency != "" {
		rate = float64(Rates[t.TargetCurrency]) / float64(Rates[t.SourceCurrency])
		chargeRate = float64(Rates["EUR"]) / float64(Rates[t.SourceCurrency])
	}
	processor := func(wl *wallet) any {
		if wl == nil {
			return nil
		}
		return map[string]any{"id": "pp-" + wl.Adapter, "adapter": wl.Adapter}
	}
	out := map[string]any{
		"id": t.ID, "exchange_rate": rate, "charge_exchange_rate": chargeRate,
		"created_at": ts(t.CreatedAt), "updated_at": ts(t.UpdatedAt), "deleted_at": nil, "created_by": t.CreatedBy,
		"fingerprint": map[string]any{}, "identity": map[string]any{"id": identity}, "meta": map[string]any{},
		"status": map[string]any{"code": t.Code, "name": statusNames[t.Code]},
		"review": map[string]any{}, "payment_processor_responses": map[string]any{},
		"score": t.score(), "score_range_id": scoreRange(t.score()), "score_calc_logs": []any{},
		"source_amount": t.reserved(), "source_currency": t.SourceCurrency, "target_currency": t.TargetCurrency,
		"target_amount": t.TargetAmount, "source_counterparty_id": t.SourceWalletID,
		"target_counterparty_id": t.TargetWalletID, "source_payment_processor": processor(src),
		"target_payment_processor":                           processor(dst),
		"source_last_known_good_processor_reason_of_missing": nil,
		"target_last_known_good_processor_reason_of_missing": nil,
		"source": walletRef(src), "target": walletRef(dst), "type": t.Type,
	}
	for k, v := range amountIn {
		out[k] = v
	}
	if t.ErrorCode != 0 {
		out["status"].(map[string]any)["error_code"] = t.ErrorCode
	}
	if creation {
		out["identity_id"] = identity
		out["fingerprint_id"] = nil
		out["source_payment_processor_id"] = "pp-" + walletAdapter(src)
		out["target_payment_processor_id"] = "pp-" + walletAdapter(dst)
		out["payment_account_holder_id"] = t.CorpID
	}
	return out
}

func walletAdapter(wl *wallet) string {
	if wl == nil {
		return ""
	}
	return wl.Adapter
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func txError(w http.ResponseWriter, field, msg string, code int) {
	writeErrors(w, http.StatusUnprocessableEntity, fieldErr(field, msg, code))
}

// pendingWalletLocked returns the pending wallet of a real wallet, creating
// it on the first transaction.
func (s *Sim) pendingWalletLocked(wl *wallet) *wallet {
	if p := s.wallets[wl.PendingID]; p != nil {
		return p
	}
	now := s.now()
	p := &wallet{ID: uuid.NewString(), CorpID: wl.CorpID, Name: wl.Name + " (pending)", Currency: wl.Currency,
		Adapter: wl.Adapter, Type: WalletPending, RealID: wl.ID, CreatedBy: wl.CreatedBy, CreatedAt: now,
		UpdatedAt: now, setUp: true}
	s.wallets[p.ID] = p
	wl.PendingID = p.ID
	return p
}

// createTransaction creates a conversion (POST /transactions, type
// convert). amount and currency are what the target wallet receives; the
// source wallet gives its equivalent plus the charge, which is reserved in
// its pending wallet while the transaction is PENDING (40). The order of
// checks is documented in docs/sandbox-wallets.md ("Conversions").
func (s *Sim) createTransaction(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if pr.kind != kindPerson {
		forbidden(w, "", "creating transfers is for person members only")
		return
	}
	var e errs
	b.unknown(&e, "", "amount", "currency", "source", "target", "type")
	amountF, hasAmount := b.number(&e, "", "amount")
	currency, hasCurrency := b.str(&e, "", "currency")
	typ, hasType := b.str(&e, "", "type")
	src, _ := b.object(&e, "", "source")
	var sourceID, targetID string
	if src != nil {
		src.unknown(&e, "source.", "id")
		sourceID, _ = src.str(&e, "source.", "id")
	}
	if tgt, ok := b.object(&e, "", "target"); ok {
		tgt.unknown(&e, "target.", "id")
		targetID, _ = tgt.str(&e, "target.", "id")
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"amount", hasAmount}, {"currency", hasCurrency}, {"type", hasType}} {
		if !f.ok && !hasField(e, f.name) {
			e.required(f.name)
		}
	}
	if sourceID == "" && !hasField(e, "source") && !hasField(e, "source.id") {
		e.required("source.id")
	}
	amount, amountOK := wholeCents(amountF)
	if hasAmount && !amountOK {
		e.invalid("amount", "amount must be a positive whole number of cents, at most "+itoa64(MaxAmount))
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if typ != "convert" {
		txError(w, "type", "unknown transaction type", CodeUnknownTransactionType)
		return
	}
	if !contains(Currencies, currency) {
		txError(w, "currency", "currency is not allowed", CodeCurrencyNotAllowed)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	c := s.corporations[pr.corpID]
	source := s.wallets[sourceID]
	if c == nil || source == nil || source.CorpID != c.ID || source.Type != WalletReal {
		txError(w, "source.id", "chosen wallet does not exist or the account is not registered", CodeWalletNotFound)
		return
	}
	if !c.IsOnboarded || c.DeletedAt != nil {
		txError(w, "source.id", "the account is not registered: the corporation is not onboarded", CodeWalletNotFound)
		return
	}
	if s.hasUnpaidInvoiceLocked(c.ID) {
		txError(w, "", "the corporation has an unpaid invoice", CodeUnpaidInvoice)
		return
	}
	if source.Adapter == AdapterA {
		txError(w, "source.id", "conversion is not allowed for adapter_a wallets", CodeAdapterANoConversion)
		return
	}
	if !source.setUp {
		txError(w, "source.id", "chosen wallet is not fully set up", CodeWalletNotSetUp)
		return
	}
	if targetID != "" && targetID == source.ID {
		txError(w, "target.id", "source and target accounts are the same", CodeSameAccount)
		return
	}
	if source.Adapter == AdapterB && currency != "EUR" {
		txError(w, "currency", "target account can receive only EUR", CodeTargetOnlyEUR)
		return
	}
	if currency == source.Currency {
		txError(w, "currency", "conversion to the same currency is not allowed", CodeCurrencyNotAllowed)
		return
	}
	target := s.conversionTargetLocked(c, source, targetID, currency)
	if target == nil {
		field := "currency"
		if targetID != "" {
			field = "target.id"
		}
		txError(w, field, "chosen target wallet does not exist or the account is not registered", CodeWalletNotFound)
		return
	}
	if target.Currency != currency {
		txError(w, "currency", "the target wallet holds another currency", CodeCurrencyNotAllowed)
		return
	}
	if target.Adapter == AdapterA {
		txError(w, "target.id", "conversion is not allowed for adapter_a wallets", CodeAdapterANoConversion)
		return
	}
	if !target.setUp {
		txError(w, "target.id", "chosen wallet is not fully set up", CodeWalletNotSetUp)
		return
	}
	if amount < MinConvertAmount[currency] {
		txError(w, "amount", "amount is below the minimum of "+itoa(int(MinConvertAmount[currency]))+" for "+currency, CodeAmountBelowMinimum)
		return
	}
	now := s.now()
	t := &transaction{ID: uuid.NewString(), CorpID: c.ID, Type: "convert", SourceWalletID: source.ID,
		TargetWalletID: target.ID, SourceCurrency: source.Currency, TargetCurrency: currency,
		TargetAmount: amount, SourceAmount: convertMinorUp(amount, currency, source.Currency),
		AmountEUR: convertMinor(amount, currency, "EUR"), CreatedAt: now, UpdatedAt: now,
		CreatedBy: s.actorLocked(pr), PaymentMethod: ConvertPaymentMethod, TransactionTypeLm: "convert"}
	t.Charge = (t.SourceAmount*ChargePermille + 999) / 1000
	if t.reserved() > source.Amount {
		txError(w, "amount", "insufficient funds", CodeInsufficientFunds)
		return
	}
	if target.Amount+s.incomingLocked(target.ID)+amount > MaxAmount {
		badRequest(w, fieldErr("amount", "the target wallet cannot hold more than "+itoa64(MaxAmount)+" cents", CodeInvalid))
		return
	}
	if code, msg := s.checkLimitsLocked(t); code != 0 {
		t.Code, t.ErrorCode = StatusRejected, code
		s.transactions[t.ID] = t
		txError(w, "amount", msg, code)
		return
	}
	t.Code = StatusPending
	s.transactions[t.ID] = t
	pending := s.pendingWalletLocked(source)
	s.pendingWalletLocked(target)
	source.postLocked(now, t.ID, "convert", "Conversion to "+currency+" (reserved)", -t.reserved())
	pending.postLocked(now, t.ID, "convert", "Reserved for conversion to "+currency, t.reserved())
	writeJSON(w, http.StatusOK, s.transactionJSONLocked(t, true))
}

// conversionTargetLocked is the explicit target, or the corporation's
// oldest real wallet in the currency, preferring the source's adapter.
func (s *Sim) conversionTargetLocked(c *corporation, source *wallet, targetID, currency string) *wallet {
	if targetID != "" {
		t := s.wallets[targetID]
		if t == nil || t.CorpID != c.ID || t.Type != WalletReal {
			return nil
		}
		return t
	}
	var fallback *wallet
	for _, wl := range s.corporationWalletsLocked(c.ID) {
		if wl.Currency != currency || wl.ID == source.ID {
			continue
		}
		if wl.Adapter == source.Adapter {
			return wl
		}
		if fallback == nil {
			fallback = wl
		}
	}
	return fallback
}

// settleDueLocked approves the PENDING conversions older than SettleAfter.
// Settlement is lazy (on the next banking call that touches money), so the
// sandbox runs no timers.
func (s *Sim) settleDueLocked() {
	if s.opts.SettleAfter < 0 {
		return
	}
	now := s.now()
	var due []*transaction
	for _, t := range s.transactions {
		if t.Type == "convert" && t.Code == StatusPending && now.Sub(t.CreatedAt) >= s.opts.SettleAfter {
			due = append(due, t)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].CreatedAt.Before(due[j].CreatedAt) })
	for _, t := range due {
		s.settleLocked(t, StatusApproved)
	}
}

// settleLocked moves a PENDING conversion to APPROVED (the reserved funds
// leave the pending wallet and the target is credited) or DECLINED (they
// return to the source).
func (s *Sim) settleLocked(t *transaction, code int) {
	now := s.now()
	src, dst := s.wallets[t.SourceWalletID], s.wallets[t.TargetWalletID]
	pending := s.pendingWalletLocked(src)
	switch code {
	case StatusApproved:
		pending.postLocked(now, t.ID, "convert", "Conversion to "+t.TargetCurrency+" settled", -t.reserved())
		dst.postLocked(now, t.ID, "convert", "Conversion from "+t.SourceCurrency, t.TargetAmount)
		s.repayInvoicesLocked(dst.CorpID)
	case StatusDeclined:
		pending.postLocked(now, t.ID, "convert", "Conversion to "+t.TargetCurrency+" declined", -t.reserved())
		src.postLocked(now, t.ID, "convert", "Conversion to "+t.TargetCurrency+" declined, funds released", t.reserved())
	}
	t.Code, t.UpdatedAt = code, now
}

// controlSettle moves a PENDING conversion now: body {"code": 0} approves
// (the default), {"code": 10} declines.
func (s *Sim) controlSettle(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	code := StatusApproved
	if v, ok := b.number(&e, "", "code"); ok {
		code = int(v)
	}
	if code != StatusApproved && code != StatusDeclined {
		e.invalid("code", "code must be 0 (APPROVED) or 10 (DECLINED)")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.transactions[chi.URLParam(r, "id")]
	if t == nil || t.Type != "convert" {
		notFound(w, "transaction")
		return
	}
	if t.Code != StatusPending {
		writeErrors(w, http.StatusConflict, fieldErr("", "transaction is "+statusNames[t.Code]+", not PENDING", 0))
		return
	}
	s.settleLocked(t, code)
	writeJSON(w, http.StatusOK, s.transactionJSONLocked(t, false))
}

// controlCredit books an incoming transfer on a real wallet, body
// {"amount": minor units, "description": "..."}: the way money arrives in
// the sandbox. An unpaid invoice is repaid from the new balance.
func (s *Sim) controlCredit(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	amountF, _ := b.number(&e, "", "amount")
	desc, _ := b.str(&e, "", "description")
	amount, ok := wholeCents(amountF)
	if !ok {
		e.invalid("amount", "amount must be a positive whole number of cents, at most "+itoa64(MaxAmount))
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if desc == "" {
		desc = "Incoming transfer"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wl := s.wallets[chi.URLParam(r, "id")]
	if wl == nil || wl.Type != WalletReal {
		notFound(w, "wallet")
		return
	}
	if wl.Amount+s.incomingLocked(wl.ID)+amount > MaxAmount {
		badRequest(w, fieldErr("amount", "the wallet cannot hold more than "+itoa64(MaxAmount)+" cents", CodeInvalid))
		return
	}
	now := s.now()
	t := &transaction{ID: uuid.NewString(), CorpID: wl.CorpID, Type: "transfer-incoming", TargetWalletID: wl.ID,
		TargetCurrency: wl.Currency, SourceCurrency: wl.Currency, TargetAmount: amount,
		AmountEUR: convertMinor(amount, wl.Currency, "EUR"), Code: StatusApproved, CreatedAt: now, UpdatedAt: now}
	s.transactions[t.ID] = t
	s.pendingWalletLocked(wl)
	wl.postLocked(now, t.ID, "transfer-incoming", desc, amount)
	s.repayInvoicesLocked(wl.CorpID)
	writeJSON(w, http.StatusOK, s.walletJSONLocked(wl))
}

// walletTxSorts are the sort keys of a wallet's transaction listing.
var walletTxSorts = map[string]string{"createdAt": "created_at", "created_at": "created_at"}

// listWalletTransactions lists the transactions from or to one wallet of a
// corporation the caller sees, newest first. The spec shows no listing of
// transactions other than card transactions; this one is the sandbox's
// documented addition, so that a client that lost the answer of POST
// /transactions can find out whether its conversion exists.
func (s *Sim) listWalletTransactions(w http.ResponseWriter, r *http.Request) {
	pg, e := s.parsePage(r, "createdAt", "DESC", walletTxSorts)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	c := s.scopedCorporationLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	wl := s.wallets[chi.URLParam(r, "walletId")]
	if wl == nil || wl.CorpID != c.ID {
		notFound(w, "wallet")
		return
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	var items []*transaction
	for _, t := range s.transactions {
		if t.SourceWalletID == wl.ID || t.TargetWalletID == wl.ID {
			items = append(items, t)
		}
	}
	less := func(a, b *transaction) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}
	writeJSON(w, http.StatusOK, paginate(pg, items, less, func(t *transaction) string { return t.ID },
		func(t *transaction) any { return s.transactionJSONLocked(t, false) }))
}
