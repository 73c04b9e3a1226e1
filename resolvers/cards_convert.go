package resolvers

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Mapping from banking card types to graph models. Credentials never pass
// through here: revealCredentials answers them straight from the client.

func toCard(c *banking.Card, corporationID string) *model.Card {
	if c == nil {
		return nil
	}
	// One allocation for the card and what it points to: cards come in
	// listings.
	b := new(struct {
		card     model.Card
		balance  model.Money
		pan      model.MaskedPan
		times    [2]time.Time
		embossed string
	})
	b.balance = model.Money{Amount: c.AvailableBalance, Currency: c.Currency}
	b.pan = model.MaskedPan{Bin: c.PAN.BIN, LastFour: c.PAN.LastFour}
	b.card = model.Card{
		ID:               c.ID,
		Status:           model.CardStatus(c.Status),
		Type:             model.CardType(c.Type),
		Brand:            model.CardBrand(c.Brand),
		Region:           c.Region,
		Currency:         c.Currency,
		AvailableBalance: &b.balance,
		MaskedPan:        &b.pan,
		CreatedAt:        timeIn(&b.times[0], c.CreatedAt),
		UpdatedAt:        timeIn(&b.times[1], c.ModifiedAt),
		FundingWalletID:  c.FundingSourceID,
		CardholderID:     c.Cardholder.ExternalID,
		CorporationID:    corporationID,
	}
	out := &b.card
	// Values the spec does not list become the closest safe reading: a
	// status nobody knows cannot be spent with.
	if !out.Status.IsValid() {
		out.Status = model.CardStatusInactive
	}
	if !out.Type.IsValid() {
		out.Type = model.CardTypeVirtual
	}
	if !out.Brand.IsValid() {
		out.Brand = model.CardBrandMastercard
	}
	if c.DisplayName != "" {
		out.DisplayName = &c.DisplayName
	}
	if e := c.EmbossedData; e != nil {
		if b.embossed = strings.TrimSpace(e.FirstName + " " + e.LastName); b.embossed != "" {
			out.EmbossedName = &b.embossed
		}
	}
	out.ExpiryMonth, _ = strconv.ParseInt(c.Expiry.Month, 10, 64)
	out.ExpiryYear, _ = strconv.ParseInt(c.Expiry.Year, 10, 64)
	addCardDetails(out, c)
	return out
}

func toCards(ctx context.Context, list []*banking.Card, keep func(*banking.Card) bool) []*model.Card {
	corp := viewerCorporation(ctx)
	out := make([]*model.Card, 0, len(list))
	for _, c := range list {
		if keep == nil || keep(c) {
			out = append(out, toCard(c, corp))
		}
	}
	return out
}

// toCardTransaction maps a transaction of a card: the upstream lists them per
// card only, so the card is part of the global id.
func toCardTransaction(t *banking.CardTransaction, cardID string) *model.CardTransaction {
	out := &model.CardTransaction{
		GlobalID:  relay.ID(relay.CardTransaction, cardID, t.ID),
		ID:        t.ID,
		Type:      t.Type,
		Amount:    &model.Money{Amount: t.SourceAmount, Currency: t.SourceCurrency},
		CreatedAt: timePtr(t.CreatedAt),
	}
	// status, meta and target are unshaped in the spec: read what is there.
	var st struct {
		Name      string `json:"name"`
		Code      *int64 `json:"code"`
		ErrorCode *int64 `json:"error_code"`
	}
	out.State = model.TransactionStatusUnknown
	if json.Unmarshal(t.Status, &st) == nil {
		out.Status = strPtr(st.Name)
		if st.Code != nil && *st.Code >= math.MinInt32 && *st.Code <= math.MaxInt32 {
			out.StatusCode = st.Code
			if s := model.TransactionStatus(banking.TransactionStatusName(int(*st.Code))); s.IsValid() {
				out.State = s
			}
		}
		if st.ErrorCode != nil && *st.ErrorCode >= math.MinInt32 && *st.ErrorCode <= math.MaxInt32 {
			out.ErrorCode = st.ErrorCode
			out.ErrorName = strPtr(banking.CodeName(int(*st.ErrorCode)))
		}
	}
	var meta struct {
		Description       string `json:"description"`
		AuthorisationCode string `json:"authorisation_code"`
	}
	if json.Unmarshal(t.Meta, &meta) == nil {
		out.Description = strPtr(meta.Description)
		out.AuthorisationCode = strPtr(meta.AuthorisationCode)
		out.AuthorisationName = strPtr(banking.AuthorisationName(meta.AuthorisationCode))
	}
	return out
}
