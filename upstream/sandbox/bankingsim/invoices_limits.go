package bankingsim

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// ConvertPaymentMethod is the payment method conversions count against in
// the corporation limits (the spec shows bank-transfer only; ours).
const ConvertPaymentMethod = "internal"

// invoice is a Corporation Invoice. Amounts are minor units.
type invoice struct {
	ID, CorpID, Type, Currency string
	Amount, Unpaid             int64
	PaymentTxID                string
	Repayments                 []repayment
	CreatedAt, UpdatedAt       time.Time
}

type repayment struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
	Type   string `json:"type"`
}

func (inv *invoice) json(identityID string) map[string]any {
	reps := []repayment{}
	reps = append(reps, inv.Repayments...)
	return map[string]any{"id": inv.ID, "is_paid": inv.Unpaid == 0, "type": inv.Type, "amount": inv.Amount,
		"unpaid_amount": inv.Unpaid, "identity_id": identityID, "currency": inv.Currency,
		"invoice_payment_transaction_id": inv.PaymentTxID, "repayments": reps,
		"created_at": ts(inv.CreatedAt), "updated_at": ts(inv.UpdatedAt)}
}

func (s *Sim) hasUnpaidInvoiceLocked(corpID string) bool {
	for _, inv := range s.invoices {
		if inv.CorpID == corpID && inv.Unpaid > 0 {
			return true
		}
	}
	return false
}

// repayInvoicesLocked repays the corporation's unpaid invoices, oldest
// first, from the available balance of its oldest real wallet in the
// invoice's currency, when that balance covers the unpaid amount: one
// repayment of type balance; the invoice becomes paid and its
// invoice-payment transaction moves from INITIALIZED to APPROVED.
func (s *Sim) repayInvoicesLocked(corpID string) {
	var unpaid []*invoice
	for _, inv := range s.invoices {
		if inv.CorpID == corpID && inv.Unpaid > 0 {
			unpaid = append(unpaid, inv)
		}
	}
	sort.Slice(unpaid, func(i, j int) bool { return unpaid[i].CreatedAt.Before(unpaid[j].CreatedAt) })
	for _, inv := range unpaid {
		for _, wl := range s.corporationWalletsLocked(corpID) {
			if wl.Currency != inv.Currency || wl.Amount < inv.Unpaid {
				continue
			}
			now := s.now()
			wl.postLocked(now, inv.PaymentTxID, "invoice-payment", "Invoice "+inv.Type+" repaid", -inv.Unpaid)
			inv.Repayments = append(inv.Repayments, repayment{ID: uuid.NewString(), Amount: inv.Unpaid, Type: "balance"})
			inv.Unpaid, inv.UpdatedAt = 0, now
			if t := s.transactions[inv.PaymentTxID]; t != nil {
				t.Code, t.UpdatedAt, t.SourceWalletID = StatusApproved, now, wl.ID
			}
			break
		}
	}
}

func (s *Sim) listInvoices(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCorporationLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	var list []*invoice
	for _, inv := range s.invoices {
		if inv.CorpID == c.ID {
			list = append(list, inv)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].CreatedAt.Before(list[j].CreatedAt) })
	out := []any{}
	for _, inv := range list {
		out = append(out, inv.json(c.IdentityID))
	}
	writeJSON(w, http.StatusOK, out)
}

// limitFields are the limitSet fields, camelCase as the examples show; the
// sandbox also accepts each in snake_case.
var limitFields = []string{"dailySuccessfulVelocity", "weeklySuccessfulVelocity", "monthlySuccessfulVelocity",
	"attemptVelocityPerHour", "minimumAmount", "maximumAmount", "dailyLimitAmount", "weeklyLimitAmount",
	"monthlyLimitAmount"}

var snakeOf = map[string]string{
	"dailySuccessfulVelocity": "daily_successful_velocity", "weeklySuccessfulVelocity": "weekly_successful_velocity",
	"monthlySuccessfulVelocity": "monthly_successful_velocity", "attemptVelocityPerHour": "attempt_velocity_per_hour",
	"minimumAmount": "minimum_amount", "maximumAmount": "maximum_amount", "dailyLimitAmount": "daily_limit_amount",
	"weeklyLimitAmount": "weekly_limit_amount", "monthlyLimitAmount": "monthly_limit_amount",
	"paymentMethod": "payment_method", "transactionType": "transaction_type", "limitSet": "limit_set",
	"corporationId": "corporation_id",
}

// limit is a Corporation Limit. Amounts are minor units of the
// corporation's currency; a nil value is no limit.
type limit struct {
	ID, CorpID, PaymentMethod, TransactionType string
	Set                                        map[string]*int64
	SetID                                      string
	CreatedAt, UpdatedAt                       time.Time
	SetCreatedAt, SetUpdatedAt                 time.Time
}

func (l *limit) json(identityID string) map[string]any {
	set := map[string]any{"_id": l.SetID, "createdAt": ts(l.SetCreatedAt), "updatedAt": ts(l.SetUpdatedAt)}
	for _, f := range limitFields {
		if v := l.Set[f]; v != nil {
			set[f] = *v
		} else {
			set[f] = nil
		}
	}
	return map[string]any{"id": l.ID, "identityId": identityID, "paymentMethod": l.PaymentMethod,
		"transactionType": l.TransactionType, "limitSet": set, "createdAt": ts(l.CreatedAt), "updatedAt": ts(l.UpdatedAt)}
}

func (s *Sim) limitOfLocked(w http.ResponseWriter, r *http.Request) (*corporation, *limit) {
	c := s.scopedCorporationLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return nil, nil
	}
	l := s.limits[chi.URLParam(r, "limitId")]
	if l == nil || l.CorpID != c.ID {
		notFound(w, "limit")
		return nil, nil
	}
	return c, l
}

func (s *Sim) listLimits(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCorporationLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	var list []*limit
	for _, l := range s.limits {
		if l.CorpID == c.ID {
			list = append(list, l)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
			return list[i].CreatedAt.Before(list[j].CreatedAt)
		}
		return list[i].ID < list[j].ID
	})
	out := []any{}
	for _, l := range list {
		out = append(out, l.json(c.IdentityID))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) getLimit(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, l := s.limitOfLocked(w, r); l != nil {
		writeJSON(w, http.StatusOK, l.json(c.IdentityID))
	}
}

// camel reads a field by its camelCase name or, failing that, its
// snake_case one.
func (b body) camel(k string) (json.RawMessage, string, bool) {
	if v, ok := b[k]; ok {
		return v, k, true
	}
	if sn := snakeOf[k]; sn != "" {
		if v, ok := b[sn]; ok {
			return v, sn, true
		}
	}
	return nil, k, false
}

// putLimit changes a limit (staff only: limits are the bank's risk control
// over the corporation). Body: paymentMethod, transactionType, id,
// corporationId, limitSet, camelCase or snake_case. Absent limitSet fields
// stay; null removes that limit; values are whole non-negative numbers.
func (s *Sim) putLimit(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	if !principalOf(r).isStaff() {
		forbidden(w, "", "limits are changed by staff only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, l := s.limitOfLocked(w, r)
	if l == nil {
		return
	}
	var e errs
	allowed := []string{"paymentMethod", "transactionType", "id", "limitSet", "corporationId"}
	for _, k := range allowed {
		if sn := snakeOf[k]; sn != "" {
			allowed = append(allowed, sn)
		}
	}
	b.unknown(&e, "", allowed...)
	str := func(k string) (string, bool) {
		raw, name, ok := b.camel(k)
		if !ok || isNull(raw) {
			return "", false
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			e.invalid(name, "must be a string")
			return "", false
		}
		return v, true
	}
	if v, ok := str("id"); ok && v != l.ID {
		e.invalid("id", "id does not match the path")
	}
	if v, ok := str("corporationId"); ok && v != c.ID {
		e.invalid("corporationId", "corporationId does not match the path")
	}
	pm, hasPM := str("paymentMethod")
	tt, hasTT := str("transactionType")
	set := map[string]*int64{}
	for k, v := range l.Set {
		set[k] = v
	}
	if raw, name, ok := b.camel("limitSet"); ok && !isNull(raw) {
		var ls body
		if json.Unmarshal(raw, &ls) != nil || ls == nil {
			e.invalid(name, "must be an object")
		} else {
			allowedSet := []string{"_id", "createdAt", "updatedAt", "created_at", "updated_at"}
			for _, f := range limitFields {
				allowedSet = append(allowedSet, f, snakeOf[f])
			}
			ls.unknown(&e, name+".", allowedSet...)
			for _, f := range limitFields {
				raw, fname, ok := ls.camel(f)
				if !ok {
					continue
				}
				if isNull(raw) {
					set[f] = nil
					continue
				}
				var v float64
				if json.Unmarshal(raw, &v) != nil || v < 0 || v > MaxAmount || v != math.Trunc(v) {
					e.invalid(name+"."+fname, "must be a whole number from 0 to "+itoa64(MaxAmount))
					continue
				}
				n := int64(v)
				set[f] = &n
			}
		}
	}
	if mn, mx := set["minimumAmount"], set["maximumAmount"]; mn != nil && mx != nil && *mn > *mx {
		e.invalid("limitSet.minimumAmount", "minimumAmount must not exceed maximumAmount")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	now := s.now()
	if hasPM && pm != "" {
		l.PaymentMethod = pm
	}
	if hasTT && tt != "" {
		l.TransactionType = tt
	}
	l.Set, l.UpdatedAt, l.SetUpdatedAt = set, now, now
	writeJSON(w, http.StatusOK, l.json(c.IdentityID))
}

// deleteLimit removes a limit (staff only) and answers it.
func (s *Sim) deleteLimit(w http.ResponseWriter, r *http.Request) {
	if !principalOf(r).isStaff() {
		forbidden(w, "", "limits are changed by staff only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, l := s.limitOfLocked(w, r)
	if l == nil {
		return
	}
	delete(s.limits, l.ID)
	writeJSON(w, http.StatusOK, l.json(c.IdentityID))
}

// checkLimitsLocked applies the corporation's limit for the transaction's
// payment method and type. Amounts compare in EUR minor units; windows
// are rolling (the last hour, 24 hours, 7 days, 30 days). The order and the
// code of each rule are documented in docs/sandbox-wallets.md ("Corporation
// limits").
func (s *Sim) checkLimitsLocked(t *transaction) (int, string) {
	var l *limit
	for _, x := range s.limits {
		if x.CorpID == t.CorpID && x.PaymentMethod == t.PaymentMethod && x.TransactionType == t.TransactionTypeLm {
			l = x
			break
		}
	}
	if l == nil {
		return 0, ""
	}
	now := s.now()
	var attemptsHour, okDay, okWeek, okMonth int64
	var sumDay, sumWeek, sumMonth int64
	for _, x := range s.transactions {
		if x.CorpID != t.CorpID || x.PaymentMethod != t.PaymentMethod || x.TransactionTypeLm != t.TransactionTypeLm {
			continue
		}
		age := now.Sub(x.CreatedAt)
		if age < time.Hour {
			attemptsHour++
		}
		if !x.successful() {
			continue
		}
		if age < 24*time.Hour {
			okDay++
			sumDay = addCapped(sumDay, x.AmountEUR)
		}
		if age < 7*24*time.Hour {
			okWeek++
			sumWeek = addCapped(sumWeek, x.AmountEUR)
		}
		if age < 30*24*time.Hour {
			okMonth++
			sumMonth = addCapped(sumMonth, x.AmountEUR)
		}
	}
	lim := func(k string) (int64, bool) {
		if v := l.Set[k]; v != nil {
			return *v, true
		}
		return 0, false
	}
	if v, ok := lim("attemptVelocityPerHour"); ok && attemptsHour >= v {
		return CodeCorporationAttemptVelocity, "corporation attempt velocity per hour reached"
	}
	if v, ok := lim("minimumAmount"); ok && t.AmountEUR < v {
		return CodeCorporationAmountBelowMin, "amount is below the corporation's minimum"
	}
	if v, ok := lim("maximumAmount"); ok && t.AmountEUR > v {
		return CodeCorporationAmountAboveMax, "amount is above the corporation's per-transaction limit"
	}
	for _, p := range []struct {
		key string
		n   int64
	}{{"dailySuccessfulVelocity", okDay}, {"weeklySuccessfulVelocity", okWeek}, {"monthlySuccessfulVelocity", okMonth}} {
		if v, ok := lim(p.key); ok && p.n >= v {
			return CodeCorporationVelocityReached, "corporation velocity reached (" + p.key + ")"
		}
	}
	if v, ok := lim("dailyLimitAmount"); ok && addCapped(sumDay, t.AmountEUR) > v {
		return CodeCorporationAmountReached, "corporation daily amount reached"
	}
	for _, p := range []struct {
		key string
		sum int64
	}{{"weeklyLimitAmount", sumWeek}, {"monthlyLimitAmount", sumMonth}} {
		if v, ok := lim(p.key); ok && addCapped(p.sum, t.AmountEUR) > v {
			return CodeCorporationLimitReached, "corporation limit reached (" + p.key + ")"
		}
	}
	return 0, ""
}

// addCapped adds two non-negative amounts, stopping at math.MaxInt64: a
// window's sum compared with a limit must not wrap below it.
func addCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
