package resolvers

// Mapping of the details schema/details.graphqls adds to the records of the
// banking upstream: who created and changed a record, a wallet's bank, a
// card's address, a corporation's onboarding progress, the back-office
// fields of persons, and a wallet's transactions. Each converter of the
// domain files calls one of these, so the details stay in one place.

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// toActor maps the spec's CreatedBy / UpdatedBy; nil when absent or empty.
func toActor(a *banking.Actor) *model.Actor {
	if a == nil || (a.ID == "" && a.FullName == "") {
		return nil
	}
	kind := model.ActorKindOther
	switch strings.ToLower(a.Type) {
	case "staff":
		kind = model.ActorKindStaff
	case "person":
		kind = model.ActorKindPerson
	}
	return &model.Actor{UpstreamID: a.ID, Kind: kind, FullName: a.FullName}
}

// addWalletDetails sets a wallet's bank, last change and creator.
func addWalletDetails(out *model.Wallet, w *banking.Wallet) {
	if a := w.BankAddress; a != nil && (a.Name != "" || a.Street != "") {
		out.BankAddress = &model.BankAddress{Name: a.Name, Street: a.Street, PostCode: a.PostCode, City: a.City, Country: a.Country}
	}
	out.UpdatedAt = timePtr(w.UpdatedAt)
	out.CreatedBy = toActor(w.CreatedBy)
	out.CreatedByLoginID = strPtr(w.CreatedByLoginID)
}

// addCardDetails sets a card's address, embossed company and the issuer's
// cardholder id.
func addCardDetails(out *model.Card, c *banking.Card) {
	if a := c.Address; a != nil && (a.Street != "" || a.City != "" || a.Country != "") {
		out.Address = &model.PostalAddress{Street: a.Street, City: a.City, Region: a.Region, PostCode: a.PostCode, Country: a.Country}
	}
	if e := c.EmbossedData; e != nil {
		out.EmbossedCompanyName = strPtr(e.CompanyName)
	}
	out.IssuerCardholderID = strPtr(c.Cardholder.ID)
}

// addCorporationDetails sets a corporation's onboarding progress and who
// created and changed it.
func addCorporationDetails(out *model.Corporation, c *banking.Corporation) {
	out.AccountID = strPtr(c.AccountID)
	if c.Identity != nil {
		out.IdentityID = strPtr(c.Identity.ID)
	}
	out.IsInitialApplicationFilled = c.IsInitialApplicationFilled
	out.HasAnotherBankAccount = c.IsAnotherBankAccount
	if c.KYCDataProvidedByID != nil {
		out.KycDataProvidedByID = strPtr(*c.KYCDataProvidedByID)
	}
	if p := c.KYCDataProvider; p != nil && p.ID != "" {
		out.KycDataProvider = &model.KycDataProvider{UpstreamID: p.ID, FirstName: p.FirstName, LastName: p.LastName}
	}
	out.CreatedBy = toActor(c.CreatedBy)
	out.UpdatedBy = toActor(c.UpdatedBy)
}

// addKYCDetails sets who uploaded and who last changed a KYC document.
func addKYCDetails(out *model.KycDocument, d *banking.KYCDocument) {
	out.CreatedBy = toActor(d.CreatedBy)
	out.UpdatedBy = toActor(d.UpdatedBy)
	out.CreatedByLoginID = strPtr(d.CreatedByLoginID)
	out.UpdatedByLoginID = strPtr(d.UpdatedByLoginID)
}

// addPersonDetails sets who created and changed a person, and keeps its
// back-office fields for the resolvers that show them to staff.
func addPersonDetails(out *model.Person, p *banking.Person) {
	out.CreatedBy = toActor(p.CreatedBy)
	out.UpdatedBy = toActor(p.UpdatedBy)
	out.BackOffice = &model.PersonBackOffice{ProfileLevel: strPtr(p.ProfileLevel),
		PrimaryCurrency: strPtr(p.PrimaryCurrency), IsPersonLimitsDisabled: p.IsPersonLimitsDisabled}
}

// toWalletTransaction maps a transaction listed under walletID of
// corporationID. staff says whether the back-office fields (score, its
// range, the charge's rate) are shown.
func toWalletTransaction(t *banking.Transaction, corporationID, walletID string, staff bool) *model.WalletTransaction {
	out := &model.WalletTransaction{
		ID: t.ID, Type: t.Type, Direction: model.TransactionDirectionIncoming,
		Status: model.TransactionStatusUnknown, ExchangeRate: t.ExchangeRate,
		CreatedBy: toActor(t.CreatedBy), CreatedAt: timePtr(t.CreatedAt), UpdatedAt: timePtr(t.UpdatedAt),
	}
	if t.SourceCounterpartyID == walletID {
		out.Direction = model.TransactionDirectionOutgoing
	}
	if t.DeletedAt != nil {
		out.DeletedAt = timePtr(*t.DeletedAt)
	}
	var st struct {
		Code      *int64 `json:"code"`
		ErrorCode *int64 `json:"error_code"`
	}
	if code, ok := t.StatusCode(); ok {
		c := int64(code)
		out.StatusCode = &c
		if s := model.TransactionStatus(banking.TransactionStatusName(code)); s.IsValid() {
			out.Status = s
		}
	}
	if json.Unmarshal(t.Status, &st) == nil && st.ErrorCode != nil && *st.ErrorCode >= math.MinInt32 && *st.ErrorCode <= math.MaxInt32 {
		out.ErrorCode = st.ErrorCode
		out.ErrorName = strPtr(banking.CodeName(int(*st.ErrorCode)))
	}
	if t.SourceCounterpartyID != "" && t.SourceCurrency != "" {
		out.Source = &model.Money{Amount: t.SourceAmount, Currency: t.SourceCurrency}
	}
	if t.TargetCurrency != "" {
		out.Target = &model.Money{Amount: t.TargetAmount, Currency: t.TargetCurrency}
	}
	amounts := map[string]int64{"DKK": t.AmountDKK, "EUR": t.AmountEUR, "GBP": t.AmountGBP, "NOK": t.AmountNOK, "SEK": t.AmountSEK, "USD": t.AmountUSD}
	charges := map[string]int64{"DKK": t.ChargeDKK, "EUR": t.ChargeEUR, "GBP": t.ChargeGBP, "NOK": t.ChargeNOK, "SEK": t.ChargeSEK, "USD": t.ChargeUSD}
	for _, cur := range sixCurrencies {
		out.AmountEquivalents = append(out.AmountEquivalents, &model.Money{Amount: amounts[cur], Currency: cur})
		out.ChargeEquivalents = append(out.ChargeEquivalents, &model.Money{Amount: charges[cur], Currency: cur})
	}
	if c, ok := charges[t.SourceCurrency]; ok {
		out.Charge = &model.Money{Amount: c, Currency: t.SourceCurrency}
	}
	if t.SourceCounterpartyID != "" {
		id := relay.ID(relay.Wallet, corporationID, t.SourceCounterpartyID)
		out.SourceWalletID = &id
	}
	if t.TargetCounterpartyID != "" {
		id := relay.ID(relay.Wallet, corporationID, t.TargetCounterpartyID)
		out.TargetWalletID = &id
	}
	if staff {
		score := t.Score
		out.Score = &score
		out.ScoreRangeID = strPtr(t.ScoreRangeID)
		out.ChargeExchangeRate = t.ChargeExchangeRate
	}
	return out
}

// isStaff reports whether the request acts as a staff member, who alone
// sees the back-office fields.
func isStaff(ctx context.Context) bool {
	s := session.From(ctx)
	return s != nil && s.Kind == session.Staff
}
