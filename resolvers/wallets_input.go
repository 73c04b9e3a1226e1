package resolvers

import (
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // statement time zones work on hosts without a tz database

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Validation of wallet and money inputs before any upstream call. The
// gateway checks what it can know on its own (formats, IBAN checksums,
// field combinations); the upstream keeps the last word (per-country IBAN
// lengths, balances, limits). This is the gateway's own code: the sandbox
// has its own IBAN table and shares none of it.

// currencies are the six currencies of the banking spec.
var currencies = []string{"USD", "EUR", "GBP", "SEK", "DKK", "NOK"}

var (
	ibanFormatRe = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
	bicFormatRe  = regexp.MustCompile(`^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	digitsRe     = regexp.MustCompile(`^[0-9]+$`)
)

// normalizeIBAN removes the spaces of the printed form and upper-cases.
func normalizeIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// ibanChecksumOK is the ISO 13616 check: move the first four characters to
// the end, read letters as 10..35, and the number mod 97 must be 1.
func ibanChecksumOK(iban string) bool {
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] {
		if r >= 'A' && r <= 'Z' {
			digits.WriteString(big.NewInt(int64(r - 'A' + 10)).String())
		} else {
			digits.WriteRune(r)
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

// iban checks an IBAN's format and checksum and returns it normalised.
func (v *validator) iban(field, raw string) string {
	iban := normalizeIBAN(raw)
	switch {
	case iban == "":
		v.fail(field, "%s is required", field)
	case !ibanFormatRe.MatchString(iban):
		v.fail(field, "%s is not an IBAN: two letters, two check digits, then 11 to 30 letters or digits", field)
	case !ibanChecksumOK(iban):
		v.fail(field, "%s has a wrong checksum; check for a typing error", field)
	}
	return iban
}

func (v *validator) bic(field string, s *string) string {
	if s == nil {
		return ""
	}
	b := strings.ToUpper(strings.TrimSpace(*s))
	if !bicFormatRe.MatchString(b) {
		v.fail(field, "%s must be a BIC of 8 or 11 characters", field)
	}
	return b
}

func (v *validator) id(field, s string) {
	v.required(field, s, 100)
}

func adapterWire(a model.WalletAdapter) string { return strings.ToLower(string(a)) }

func modeWire(m *model.RequisitesMode) string {
	if m != nil && *m == model.RequisitesModeManual {
		return "manual"
	}
	return "automatic"
}

// walletCreateRequest checks createWallet's adapter rules (the spec's
// create-wallet field list) and builds the upstream request.
func walletCreateRequest(in model.CreateWalletInput) (*banking.WalletCreateRequest, error) {
	var v validator
	v.id("input.corporationId", in.CorporationID)
	v.optional("input.name", in.Name, 100)
	a := in.Adapter
	only := func(field string, given bool, adapters ...model.WalletAdapter) {
		if given && !slices.Contains(adapters, a) {
			v.fail(field, "%s is not used by %s wallets", field, a)
		}
	}
	only("input.purpose", in.Purpose != nil, model.WalletAdapterAdapterA)
	only("input.requisitesMode", in.RequisitesMode != nil, model.WalletAdapterAdapterA)
	only("input.sepa", in.Sepa != nil, model.WalletAdapterAdapterA, model.WalletAdapterAdapterB)
	only("input.ukLocal", in.UkLocal != nil, model.WalletAdapterAdapterB)
	only("input.crossBorder", in.CrossBorder != nil, model.WalletAdapterAdapterB)
	only("input.currencies", in.Currencies != nil, model.WalletAdapterAdapterC)
	req := &banking.WalletCreateRequest{Adapter: adapterWire(a), Name: strings.TrimSpace(deref(in.Name))}
	if in.Purpose != nil {
		req.Purpose = string(*in.Purpose)
	}
	if in.RequisitesMode != nil {
		req.ManualOrAutomatic = modeWire(in.RequisitesMode)
	}
	if s := in.Sepa; s != nil {
		if a == model.WalletAdapterAdapterA {
			if modeWire(in.RequisitesMode) != "manual" {
				v.fail("input.sepa", "sepa is given only with requisitesMode MANUAL")
			}
			if s.Bic != nil {
				v.fail("input.sepa.bic", "adapter A wallets take the bank's BIC; give the iban only")
			}
		} else if s.Bic == nil {
			v.fail("input.sepa.bic", "input.sepa.bic is required for adapter B")
		}
		req.SEPA = &banking.RequisitesInput{Number: v.iban("input.sepa.iban", s.Iban), Code: v.bic("input.sepa.bic", s.Bic)}
	}
	if u := in.UkLocal; u != nil {
		acc, sort := strings.TrimSpace(u.AccountNumber), strings.ReplaceAll(strings.TrimSpace(u.SortCode), "-", "")
		if len(acc) != 8 || !digitsRe.MatchString(acc) {
			v.fail("input.ukLocal.accountNumber", "input.ukLocal.accountNumber must be 8 digits")
		}
		if len(sort) != 6 || !digitsRe.MatchString(sort) {
			v.fail("input.ukLocal.sortCode", "input.ukLocal.sortCode must be 6 digits")
		}
		req.UKLocal = &banking.RequisitesInput{Number: acc, Code: sort}
	}
	if c := in.CrossBorder; c != nil {
		v.required("input.crossBorder.accountNumber", c.AccountNumber, 34)
		bic := c.Bic
		req.CrossBorder = &banking.RequisitesInput{Number: strings.TrimSpace(c.AccountNumber), Code: v.bic("input.crossBorder.bic", &bic)}
	}
	if a == model.WalletAdapterAdapterC {
		if len(in.Currencies) == 0 {
			v.fail("input.currencies", "input.currencies is required for adapter C: one wallet per currency")
		}
		seen := map[string]bool{}
		for _, c := range in.Currencies {
			if !slices.Contains(currencies, c) {
				v.fail("input.currencies", "%q is not one of USD, EUR, GBP, SEK, DKK, NOK", c)
			}
			if seen[c] {
				v.fail("input.currencies", "%s is given twice", c)
			}
			seen[c] = true
		}
		req.Currencies = in.Currencies
	}
	return req, v.err
}

// requisitesRequest checks the mode/sepa rule of creating or attaching
// requisites: MANUAL needs sepa with its BIC, AUTOMATIC takes none.
func requisitesRequest(adapter model.WalletAdapter, mode *model.RequisitesMode, sepa *model.SepaRequisitesInput) (*banking.RequisitesCreateRequest, error) {
	var v validator
	req := &banking.RequisitesCreateRequest{Adapter: adapterWire(adapter), ManualOrAutomatic: modeWire(mode)}
	switch {
	case req.ManualOrAutomatic == "manual" && sepa == nil:
		v.fail("input.sepa", "input.sepa is required when mode is MANUAL")
	case req.ManualOrAutomatic == "automatic" && sepa != nil:
		v.fail("input.sepa", "input.sepa is given only when mode is MANUAL")
	case sepa != nil:
		if sepa.Bic == nil {
			v.fail("input.sepa.bic", "input.sepa.bic is required when mode is MANUAL")
		}
		req.SEPA = &banking.RequisitesInput{Number: v.iban("input.sepa.iban", sepa.Iban), Code: v.bic("input.sepa.bic", sepa.Bic)}
	}
	return req, v.err
}

// conversionRequest checks createConversion's input: a positive amount in
// one of the six currencies. The per-currency minimum is left to the
// upstream, which answers 20005 (UPSTREAM_REJECTED with the code): the bank
// owns its minimums, and a copy here would refuse or pass amounts
// differently the day it changes them.
func conversionRequest(in model.CreateConversionInput) (*banking.ConversionRequest, error) {
	var v validator
	v.id("input.sourceWalletId", in.SourceWalletID)
	if in.TargetWalletID != nil {
		v.id("input.targetWalletId", *in.TargetWalletID)
	}
	if !slices.Contains(currencies, in.Currency) {
		v.fail("input.currency", "input.currency must be one of USD, EUR, GBP, SEK, DKK, NOK")
	}
	if in.Amount <= 0 {
		v.fail("input.amount", "input.amount must be a positive number of minor units")
	}
	return &banking.ConversionRequest{Amount: in.Amount, Currency: in.Currency, SourceID: in.SourceWalletID,
		TargetID: deref(in.TargetWalletID)}, v.err
}

// limitUpdate checks updateLimit: values are zero or more.
func limitUpdate(in model.UpdateLimitInput) (*banking.LimitUpdate, error) {
	var v validator
	v.id("input.corporationId", in.CorporationID)
	v.id("input.id", in.ID)
	v.optional("input.paymentMethod", in.PaymentMethod, 100)
	v.optional("input.transactionType", in.TransactionType, 100)
	s := in.LimitSet
	set := &banking.LimitSetUpdate{
		DailySuccessfulVelocity: s.DailySuccessfulVelocity, WeeklySuccessfulVelocity: s.WeeklySuccessfulVelocity,
		MonthlySuccessfulVelocity: s.MonthlySuccessfulVelocity, AttemptVelocityPerHour: s.AttemptVelocityPerHour,
		MinimumAmount: s.MinimumAmount, MaximumAmount: s.MaximumAmount, DailyLimitAmount: s.DailyLimitAmount,
		WeeklyLimitAmount: s.WeeklyLimitAmount, MonthlyLimitAmount: s.MonthlyLimitAmount,
	}
	for name, p := range map[string]*int64{
		"dailySuccessfulVelocity": s.DailySuccessfulVelocity, "weeklySuccessfulVelocity": s.WeeklySuccessfulVelocity,
		"monthlySuccessfulVelocity": s.MonthlySuccessfulVelocity, "attemptVelocityPerHour": s.AttemptVelocityPerHour,
		"minimumAmount": s.MinimumAmount, "maximumAmount": s.MaximumAmount, "dailyLimitAmount": s.DailyLimitAmount,
		"weeklyLimitAmount": s.WeeklyLimitAmount, "monthlyLimitAmount": s.MonthlyLimitAmount,
	} {
		if p != nil && *p < 0 {
			v.fail("input.limitSet."+name, "input.limitSet.%s must be zero or more", name)
		}
	}
	if s.MinimumAmount != nil && s.MaximumAmount != nil && *s.MinimumAmount > *s.MaximumAmount {
		v.fail("input.limitSet.minimumAmount", "input.limitSet.minimumAmount must not exceed maximumAmount")
	}
	return &banking.LimitUpdate{PaymentMethod: deref(in.PaymentMethod), TransactionType: deref(in.TransactionType), LimitSet: set}, v.err
}

// statementOptions checks the statement parameters: the format's wallet
// count, dates in order, a real time zone.
func statementOptions(in model.RequestStatementInput) (*banking.StatementOptions, error) {
	var v validator
	switch {
	case len(in.WalletIds) == 0:
		v.fail("input.walletIds", "input.walletIds needs at least one wallet")
	case in.Format == model.StatementFormatPDF && len(in.WalletIds) != 1:
		v.fail("input.walletIds", "a PDF statement covers exactly one wallet; ask for CSV for several")
	}
	for _, id := range in.WalletIds {
		v.id("input.walletIds", id)
	}
	opts := &banking.StatementOptions{CorporationID: deref(in.CorporationID)}
	if in.From != nil {
		opts.From = in.From.Format(model.DateLayout)
	}
	if in.To != nil {
		opts.To = in.To.Format(model.DateLayout)
	}
	if in.From != nil && in.To != nil && in.From.After(in.To.Time) {
		v.fail("input.from", "input.from must not be after input.to")
	}
	if tz := deref(in.Timezone); tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
			v.fail("input.timezone", "input.timezone must be a tz database name such as Europe/Riga")
		}
		opts.Timezone = tz
	}
	return opts, v.err
}
