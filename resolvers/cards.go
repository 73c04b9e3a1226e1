package resolvers

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Card credential reads per person and minute (a burst of as many): enough
// for a person to look at a card's number, far too few to harvest numbers.
// The limit is kept per replica.
const credentialReadsPerMinute = 5

// credentialLimiter limits credential reads per person, made on first use so
// that Resolver needs no constructor. Per person, not per session: signing
// in again is free, so a per-session allowance is no limit at all.
type credentialLimiter struct {
	once sync.Once
	lim  *ratelimit.Keyed
}

func (c *credentialLimiter) allow(s *session.Session) bool {
	c.once.Do(func() { c.lim = ratelimit.PerMinute(credentialReadsPerMinute) })
	key := "session:" + s.ID
	switch {
	case s.PersonID != "":
		key = "person:" + s.PersonID
	case s.PrincipalID != "":
		key = string(s.Kind) + ":" + s.PrincipalID
	}
	ok, _ := c.lim.Allow(key)
	return ok
}

// Gateway event names of cards and KYC documents.
const (
	EventCardIssued             = "CardIssued"
	EventCardSimulation         = "CardTransactionSimulated"
	EventKYCDocumentStatusMoved = "KycDocumentStatusChanged"
)

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
	return out
}

// viewerCorporation is the corporation every card a session sees belongs
// to: its own for persons and API clients, "" for staff (who see all).
func viewerCorporation(ctx context.Context) string {
	if s := session.From(ctx); s != nil && s.Kind != session.Staff {
		return s.CorporationID
	}
	return ""
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

// cardCorporation finds a card's corporation: the viewer's own, or (staff)
// the cardholder's, through the batched person loader.
func cardCorporation(ctx context.Context, c *model.Card) (string, error) {
	if c.CorporationID != "" {
		return c.CorporationID, nil
	}
	p, err := loaders.For(ctx).Person.Load(ctx, c.CardholderID)()
	if err != nil {
		return "", err
	}
	return loaders.CorporationOf(p), nil
}

// cardsOfCorporation filters the request's one card listing to a
// corporation. For staff every cardholder is looked up once, in one batch.
func cardsOfCorporation(ctx context.Context, corporationID string) ([]*model.Card, error) {
	l := loaders.For(ctx)
	all, err := l.AllCards(ctx)
	if err != nil {
		return nil, err
	}
	if own := viewerCorporation(ctx); own != "" {
		if own != corporationID {
			return []*model.Card{}, nil
		}
		return toCards(ctx, all, nil), nil
	}
	ids := make([]string, len(all))
	for i, c := range all {
		ids[i] = c.Cardholder.ExternalID
	}
	persons, errs := l.PersonsOf(ctx, ids)
	out := []*model.Card{}
	for i, c := range all {
		if len(errs) > i && errs[i] != nil {
			return nil, errs[i]
		}
		if loaders.CorporationOf(persons[i]) == corporationID {
			out = append(out, toCard(c, corporationID))
		}
	}
	return out, nil
}

// cardholders answers Card.cardholder for all the sibling cards of a list
// at once (a gqlgen batch resolver, gqlgen.yml), from the operation's first
// page of the person listing, without waiting for the Person loader's
// window: on the dashboard that window came after the card listing, on the
// screen's critical path. A card whose cardholder could not be read gets its
// own error on its own path (batchResults); one the upstream does not have
// is null.
func cardholders(ctx context.Context, cards []*model.Card) ([]*model.Person, error) {
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.CardholderID
	}
	persons, errs := loaders.For(ctx).PersonsOf(ctx, ids)
	return batchResults(persons, errs, toPerson)
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
		Name string `json:"name"`
	}
	if json.Unmarshal(t.Status, &st) == nil && st.Name != "" {
		out.Status = &st.Name
	}
	var meta struct {
		Description string `json:"description"`
	}
	if json.Unmarshal(t.Meta, &meta) == nil && meta.Description != "" {
		out.Description = &meta.Description
	}
	return out
}

// revealCredentials reads a card's PAN and CVC for the one request that
// asked. Only persons read them (see docs/identity.md); every read counts
// against the person's limit; the answer is marked no-store before the
// upstream is asked. The values go from the client's Secret straight into
// the response: no loader, cache, log line or event sees them.
func (r *Resolver) revealCredentials(ctx context.Context, cardID string) (*model.CardCredentials, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	if s.Kind != session.Person {
		return nil, gqlerr.Forbiddenf("card credentials are shown to persons of the card's corporation only")
	}
	var v validator
	v.required("cardId", cardID, 100)
	if v.err != nil {
		return nil, v.err
	}
	if !r.credentialReads.allow(s) {
		return nil, &gqlerr.Error{Code: gqlerr.RateLimited, Message: "too many card credential reads; try again in a minute"}
	}
	gqlhttp.MarkNoStore(ctx)
	cr, err := r.Banking.Cards.Credentials(ctx, cardID)
	if err != nil {
		return nil, err
	}
	return &model.CardCredentials{CardID: cardID, Pan: cr.PAN.Reveal(), Cvc: cr.CVC2.Reveal()}, nil
}

// actingCorporation is the corporation a card or KYC operation acts on:
// staff name it, persons and API clients act on their own (naming another
// is forbidden), introducers may not.
func actingCorporation(ctx context.Context, given *string) (string, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return "", err
	}
	switch s.Kind {
	case session.Introducer:
		return "", gqlerr.Forbiddenf("introducers cannot manage cards or KYC documents")
	case session.Staff:
		if given == nil || strings.TrimSpace(*given) == "" {
			return "", gqlerr.BadInput("input.corporationId", "input.corporationId is required for staff")
		}
		return *given, nil
	}
	if given != nil && *given != "" && *given != s.CorporationID {
		return "", gqlerr.Forbiddenf("you act on your own corporation only")
	}
	return s.CorporationID, nil
}

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
	corp, err := l.Corporation.Load(ctx, corpID)()
	if err != nil {
		return nil, "", err
	}
	if corp == nil {
		return nil, "", gqlerr.NotFoundf("no such corporation")
	}
	person, err := l.Person.Load(ctx, in.CardholderID)()
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

// simulate runs a card simulation and types its answer: a decline is a
// result with the code and its name, not an error.
func (r *Resolver) simulate(ctx context.Context, in model.SimulateCardTransactionInput) (model.CardSimulationResult, error) {
	var v validator
	v.required("input.cardId", in.CardID, 100)
	if in.Amount <= 0 {
		v.fail("input.amount", "input.amount must be more than 0 minor units")
	}
	if in.Currency != banking.CardCurrencyEUR {
		v.fail("input.currency", "input.currency: only EUR can be simulated")
	}
	if v.err != nil {
		return nil, v.err
	}
	a, err := r.Banking.Cards.Simulate(ctx, &banking.SimulateCardRequest{CardID: in.CardID, Amount: in.Amount, Currency: in.Currency})
	if err != nil {
		return nil, err
	}
	c, err := r.Banking.Cards.Get(ctx, in.CardID)
	if err != nil {
		return nil, err
	}
	card := toCard(c, viewerCorporation(ctx))
	corpID, err := cardCorporation(ctx, card)
	if err != nil {
		corpID = ""
	}
	name := banking.AuthorisationName(a.Code)
	if name == "" {
		name = "UNKNOWN"
	}
	r.publishGatewayEvent(ctx, EventCardSimulation, map[string]any{"card_id": in.CardID, "corporation_id": corpID,
		"authorised": a.Authorised, "code": a.Code, "amount": in.Amount, "currency": in.Currency})
	if a.Authorised {
		return &model.CardAuthorised{Card: card, Code: a.Code, Name: name,
			Amount: &model.Money{Amount: in.Amount, Currency: in.Currency}}, nil
	}
	return &model.CardDeclined{CardID: in.CardID, Card: card, Code: a.Code, Name: name}, nil
}

func toKYCDocument(d *banking.KYCDocument, corporationID string) *model.KycDocument {
	out := &model.KycDocument{GlobalID: relay.ID(relay.KycDocument, corporationID, d.ID), ID: d.ID, Name: d.Name, Type: d.Type, CreatedAt: timePtr(d.CreatedAt),
		UpdatedAt: timePtr(d.UpdatedAt), CorporationID: corporationID}
	switch d.VerifyingStatus {
	case banking.KYCVerified:
		out.Status = model.KycDocumentStatusVerified
	case banking.KYCNotVerified:
		out.Status = model.KycDocumentStatusNotVerified
	default:
		out.Status = model.KycDocumentStatusNoMark
	}
	if d.Path != "" {
		out.Path = &d.Path
	}
	if d.ExpirationAt != nil {
		var dt model.Date
		if dt.UnmarshalGQL(*d.ExpirationAt) == nil {
			out.ExpiresAt = &dt
		}
	}
	return out
}

var kycStatusWire = map[model.KycDocumentStatus]string{
	model.KycDocumentStatusNoMark:      banking.KYCNoMark,
	model.KycDocumentStatusVerified:    banking.KYCVerified,
	model.KycDocumentStatusNotVerified: banking.KYCNotVerified,
}

// uploadKYC checks an uploaded file by size and content, then streams it
// upstream. A refused file is never sent; gqlgen removes its temporary file
// when the request ends.
func (r *Resolver) uploadKYC(ctx context.Context, in model.UploadKycDocumentInput) (*model.KycDocument, error) {
	corpID, err := actingCorporation(ctx, in.CorporationID)
	if err != nil {
		return nil, err
	}
	f := in.File
	if f.File == nil || f.Size <= 0 {
		return nil, gqlerr.BadInput("input.file", "input.file is empty")
	}
	if f.Size > MaxKYCFileBytes {
		return nil, gqlerr.BadInput("input.file", "input.file must be at most %d MiB", MaxKYCFileBytes>>20)
	}
	format, ok := detectKYCFormat(&seekerReaderAt{rs: f.File}, f.Size)
	if !ok {
		return nil, gqlerr.BadInput("input.file", "input.file must be a JPEG, PNG, PDF, DOC, DOCX, XLS or XLSX file (recognised by its content, not its name)")
	}
	name, err := kycFileName(f.Filename, format)
	if err != nil {
		return nil, err
	}
	if _, err := f.File.Seek(0, io.SeekStart); err != nil {
		return nil, &gqlerr.Error{Code: gqlerr.Internal, Message: "internal error", Cause: err}
	}
	doc, err := r.Banking.KYC.Upload(ctx, corpID, &banking.KYCUpload{
		Filename:    name,
		ContentType: format.mediaType,
		File:        io.LimitReader(f.File, f.Size),
		Type:        strings.ToLower(string(in.Type)),
	})
	if err != nil {
		return nil, err
	}
	return toKYCDocument(doc, corpID), nil
}

func (r *Resolver) updateKYC(ctx context.Context, in model.UpdateKycDocumentInput) (*model.KycDocument, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	corpID, err := actingCorporation(ctx, in.CorporationID)
	if err != nil {
		return nil, err
	}
	var v validator
	v.required("input.id", in.ID, 100)
	v.optional("input.name", in.Name, 255)
	if v.err != nil {
		return nil, v.err
	}
	if in.Name != nil {
		if err := checkFileName("input.name", *in.Name); err != nil {
			return nil, err
		}
	}
	req := &banking.KYCUpdateRequest{Name: in.Name}
	if in.ExpiresAt != nil {
		d := in.ExpiresAt.Format("2006-01-02")
		req.ExpirationAt = &d
	}
	if in.Status != nil {
		if s.Kind != session.Staff {
			return nil, &gqlerr.Error{Code: gqlerr.Forbidden, Field: "input.status",
				Message: "only staff members verify KYC documents"}
		}
		w := kycStatusWire[*in.Status]
		req.VerifyingStatus = &w
	}
	doc, err := r.Banking.KYC.Update(ctx, corpID, in.ID, req)
	if err != nil {
		return nil, err
	}
	if in.Status != nil {
		r.publishGatewayEvent(ctx, EventKYCDocumentStatusMoved, map[string]any{"document_id": doc.ID,
			"corporation_id": corpID, "status": doc.VerifyingStatus})
	}
	return toKYCDocument(doc, corpID), nil
}

// primeCardEdges loads what a card list's edges will ask for before the
// edges run, each in one batch: the cardholders (one person listing), then
// the corporations and their wallet listings. Left to the edges, a loader's
// time window could split the keys over two batches on a busy machine, and
// the cost of a listing would depend on timing.
func primeCardEdges(ctx context.Context, cards []*model.Card) error {
	holder, corp, wallet := selects(ctx, "cardholder"), selects(ctx, "corporation"), selects(ctx, "fundingWallet")
	if len(cards) == 0 || !(holder || corp || wallet) {
		return nil
	}
	l := loaders.For(ctx)
	needPersons := holder
	for _, c := range cards {
		needPersons = needPersons || c.CorporationID == ""
	}
	if needPersons {
		ids := make([]string, len(cards))
		for i, c := range cards {
			ids[i] = c.CardholderID
		}
		if _, errs := l.Person.LoadMany(ctx, ids)(); len(errs) > 0 && errs[0] != nil {
			return errs[0]
		}
	}
	seen := map[string]bool{}
	var corpIDs []string
	for _, c := range cards {
		id, err := cardCorporation(ctx, c)
		if err != nil {
			return err
		}
		if id != "" && !seen[id] {
			seen[id] = true
			corpIDs = append(corpIDs, id)
		}
	}
	var corps func() ([]*banking.Corporation, []error)
	var wallets func() ([][]*banking.Wallet, []error)
	if corp {
		corps = l.Corporation.LoadMany(ctx, corpIDs)
	}
	if wallet {
		wallets = l.CorporationWallets.LoadMany(ctx, corpIDs)
	}
	if corps != nil {
		corps()
	}
	if wallets != nil {
		wallets()
	}
	return nil
}
