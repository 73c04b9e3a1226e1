package model

import "time"

// Card is a virtual card. It is written by hand because it carries the id
// of its corporation when the listing's context knows it, which the schema
// does not show. It has no field for the PAN or the CVC: those travel only
// in CardCredentials, so no Card value can leak them.
type Card struct {
	ID               string
	Status           CardStatus
	DisplayName      *string
	Type             CardType
	Brand            CardBrand
	Region           string
	Currency         string
	AvailableBalance *Money
	ExpiryMonth      int64
	ExpiryYear       int64
	MaskedPan        *MaskedPan
	EmbossedName     *string
	CreatedAt        *time.Time
	UpdatedAt        *time.Time
	FundingWalletID  string
	CardholderID     string
	// Address, EmbossedCompanyName and IssuerCardholderID are the details
	// of schema/details.graphqls.
	Address             *PostalAddress
	EmbossedCompanyName *string
	IssuerCardholderID  *string

	// CorporationID is the owner when the viewer's scope tells it (a person
	// or API client sees only its own corporation's cards); "" for staff,
	// whose cards resolve their corporation through the cardholder.
	CorporationID string
}
