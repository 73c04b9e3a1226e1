package resolvers

import (
	"context"
	"strconv"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Validation of card inputs before any upstream call, following the banking
// spec's card issue table, and the upstream requests built from them.

// issueRequest checks the rules the gateway can check alone (the spec's
// issue table, before any upstream call) and builds the upstream request,
// filling cardholder and company details from the person and the
// corporation unless the input overrides them.
func (r *Resolver) issueRequest(ctx context.Context, in model.IssueCardInput) (*banking.IssueCardRequest, string, error) {
	var v validator
	v.required("input.fundingWalletId", in.FundingWalletID, 100)
	v.required("input.cardholderId", in.CardholderID, 100)
	if in.Type != model.CardTypeVirtual {
		v.fail("input.type", "input.type: only VIRTUAL cards can be issued")
	}
	if in.Brand != model.CardBrandMastercard {
		v.fail("input.brand", "input.brand: only MASTERCARD cards can be issued")
	}
	if in.Region != banking.CardRegionEurope {
		v.fail("input.region", "input.region: only EUROPE is available")
	}
	if in.Currency != banking.CardCurrencyEUR {
		v.fail("input.currency", "input.currency: only EUR is available")
	}
	if in.ExpiryMonth < 1 || in.ExpiryMonth > 12 {
		v.fail("input.expiryMonth", "input.expiryMonth must be 1 to 12")
	}
	if in.ExpiryYear <= 2018 || in.ExpiryYear > 9999 {
		v.fail("input.expiryYear", "input.expiryYear must be a year after 2018")
	}
	v.optional("input.displayName", in.DisplayName, 255)
	v.optional("input.templateId", in.TemplateID, 100)
	if h := in.Cardholder; h != nil {
		v.optional("input.cardholder.firstName", h.FirstName, 255)
		v.optional("input.cardholder.lastName", h.LastName, 255)
		v.optional("input.cardholder.phone", h.Phone, 20)
		v.email("input.cardholder.email", h.Email)
		checkCardAddress(&v, "input.cardholder.address", h.Address)
	}
	if c := in.Company; c != nil {
		v.optional("input.company.name", c.Name, 255)
		v.email("input.company.email", c.Email)
		v.optional("input.company.phone", c.Phone, 20)
		checkCardAddress(&v, "input.company.address", c.Address)
	}
	if v.err != nil {
		return nil, "", v.err
	}
	corpID, err := actingCorporation(ctx, in.CorporationID)
	if err != nil {
		return nil, "", err
	}
	l := loaders.For(ctx)
	corp, err := l.Corporation.Get(ctx, corpID)
	if err != nil {
		return nil, "", err
	}
	if corp == nil {
		return nil, "", gqlerr.NotFoundf("no such corporation")
	}
	person, err := l.Person.Get(ctx, in.CardholderID)
	if err != nil {
		return nil, "", err
	}
	req := &banking.IssueCardRequest{
		Card: banking.IssueCardDetails{
			Expiry:          banking.CardExpiry{Month: strconv.FormatInt(in.ExpiryMonth, 10), Year: strconv.FormatInt(in.ExpiryYear, 10)},
			DisplayName:     deref(in.DisplayName),
			FundingSourceID: in.FundingWalletID,
			Type:            string(in.Type), Brand: string(in.Brand), Region: in.Region, Currency: in.Currency,
		},
		Company: banking.IssueCardCompany{ExternalID: corp.AccountID, Name: corp.Name, Email: corp.Email,
			Address: banking.CardAddress{Street: corp.Address, City: deref(corp.City), PostCode: deref(corp.PostCode),
				Country: corp.Country}},
		Cardholder: banking.IssueCardholder{ExternalID: in.CardholderID, Type: string(in.CardholderType)},
		TemplateID: deref(in.TemplateID),
	}
	if req.Company.ExternalID == "" {
		req.Company.ExternalID = corp.ID
	}
	// A person the viewer cannot see is no cardholder of theirs. One the
	// viewer sees (staff see all) but of another corporation, or blocked, is
	// the upstream's to refuse, naming cardholder.external_id.
	if person == nil {
		return nil, "", gqlerr.BadInput("input.cardholderId", "input.cardholderId is not a person of the corporation")
	}
	req.Cardholder.FirstName, req.Cardholder.LastName = person.FirstName, person.LastName
	req.Cardholder.Phone, req.Cardholder.Email = person.Phone, person.Email
	if h := in.Cardholder; h != nil {
		setIf(&req.Cardholder.FirstName, h.FirstName)
		setIf(&req.Cardholder.LastName, h.LastName)
		setIf(&req.Cardholder.Phone, h.Phone)
		setIf(&req.Cardholder.Email, h.Email)
		req.Cardholder.Address = toCardAddress(h.Address)
	}
	if c := in.Company; c != nil {
		setIf(&req.Company.Name, c.Name)
		setIf(&req.Company.Email, c.Email)
		setIf(&req.Company.Phone, c.Phone)
		if a := toCardAddress(c.Address); a != nil {
			req.Company.Address = *a
		}
	}
	return req, corp.ID, nil
}

func setIf(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func checkCardAddress(v *validator, field string, a *model.CardAddressInput) {
	if a == nil {
		return
	}
	v.required(field+".street", a.Street, 64)
	v.required(field+".city", a.City, 64)
	v.required(field+".postCode", a.PostCode, 10)
	v.twoLetter(field+".country", &a.Country)
	v.optional(field+".region", a.Region, 100)
}

func toCardAddress(a *model.CardAddressInput) *banking.CardAddress {
	if a == nil {
		return nil
	}
	return &banking.CardAddress{Street: a.Street, City: a.City, PostCode: a.PostCode, Country: a.Country, Region: a.Region}
}
