package resolvers

import (
	"context"
	"slices"
	"strings"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/reply"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Card credential reads per person and minute (a burst of as many): enough
// for a person to look at a card's number, far too few to harvest numbers.
// The limit is kept with the policy's others (Policy.ShareLimits).
const credentialReadsPerMinute = 5

// credentialReadKey names whose allowance a credential read takes from:
// the person's, not the session's, since signing in again is free and a
// per-session allowance would be no limit at all.
func credentialReadKey(s *session.Session) string {
	switch {
	case s.PersonID != "":
		return "person:" + s.PersonID
	case s.PrincipalID != "":
		return string(s.Kind) + ":" + s.PrincipalID
	}
	return "session:" + s.ID
}

// viewerCorporation is the corporation every card a session sees belongs
// to: its own for persons and API clients, "" for staff (who see all).
func viewerCorporation(ctx context.Context) string {
	if s := session.From(ctx); s != nil && s.Kind != session.Staff {
		return s.CorporationID
	}
	return ""
}

// cardCorporation finds a card's corporation: the viewer's own, or (staff)
// the cardholder's, through the batched person loader.
func cardCorporation(ctx context.Context, c *model.Card) (string, error) {
	if c.CorporationID != "" {
		return c.CorporationID, nil
	}
	p, err := loaders.For(ctx).Person.Get(ctx, c.CardholderID)
	if err != nil {
		return "", err
	}
	return loaders.CorporationOf(p), nil
}

// cardsOfCorporation filters the request's one card listing to a
// corporation. For staff every cardholder is looked up once, in one batch.
func cardsOfCorporation(ctx context.Context, corporationID string) ([]*model.Card, error) {
	l := loaders.For(ctx)
	all, err := l.Cards.Get(ctx, loaders.Whole{})
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
	if ok, _ := r.Policy.credentials.Allow(credentialReadKey(s)); !ok {
		return nil, &gqlerr.Error{Code: gqlerr.RateLimited, Message: "too many card credential reads; try again in a minute"}
	}
	reply.MarkNoStore(ctx)
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
	// An authorisation moves value: under a key a retry never authorises
	// twice (the upstream keeps no reference to look a lost one up by, so
	// a lost answer stays OUTCOME_UNKNOWN for the key).
	req := &banking.SimulateCardRequest{CardID: in.CardID, Amount: in.Amount, Currency: in.Currency}
	a, fresh, err := createOnce(ctx, r, "card-simulation", in.IdempotencyKey, fingerprintOf(req),
		func(ctx context.Context) (string, banking.Authorisation, error) {
			a, err := r.Banking.Cards.Simulate(ctx, req)
			if err != nil {
				return "", banking.Authorisation{}, err
			}
			return in.CardID, *a, nil
		})
	if err != nil {
		return nil, moneyError(err)
	}
	// The authorisation is made (or declined) by now: a card that cannot be
	// read back is null in the answer, as the schema says, never an error
	// that would invite a retry authorising again.
	var card *model.Card
	corpID := viewerCorporation(ctx)
	if c, err := r.Banking.Cards.Get(ctx, in.CardID); err != nil {
		r.Logger.WarnContext(ctx, "could not read a card back after its simulation", "err", err)
	} else {
		card = toCard(c, corpID)
		if corpID, err = cardCorporation(ctx, card); err != nil {
			corpID = ""
		}
	}
	name := banking.AuthorisationName(a.Code)
	if name == "" {
		name = "UNKNOWN"
	}
	if fresh { // a replay was announced by the call that made it
		r.publishGatewayEvent(ctx, events.CardTransactionSimulated, corpID, relay.ID(relay.Card, in.CardID), map[string]any{"card_id": in.CardID,
			"authorised": a.Authorised, "code": a.Code, "amount": in.Amount, "currency": in.Currency})
	}
	if a.Authorised {
		return &model.CardAuthorised{Card: card, Code: a.Code, Name: name,
			Amount: &model.Money{Amount: in.Amount, Currency: in.Currency}}, nil
	}
	return &model.CardDeclined{CardID: in.CardID, Card: card, Code: a.Code, Name: name}, nil
}

// primeCardEdges reads what a card list's edges will ask for before the
// edges run: the cardholders (one person listing), then, side by side, the
// corporations and their wallet listings. A cardholder that cannot be read
// fails the list, as the edges would.
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
		if _, errs := l.PersonsOf(ctx, ids); len(errs) > 0 && errs[0] != nil {
			return errs[0]
		}
	}
	var corpIDs []string
	for _, c := range cards {
		id, err := cardCorporation(ctx, c)
		if err != nil {
			return err
		}
		if id != "" && !slices.Contains(corpIDs, id) {
			corpIDs = append(corpIDs, id)
		}
	}
	for _, id := range corpIDs {
		if corp {
			l.Corporation.Start(ctx, id)
		}
		if wallet {
			l.CorporationWallets.Start(ctx, id)
		}
	}
	for _, id := range corpIDs {
		if corp {
			_, _ = l.Corporation.Get(ctx, id)
		}
		if wallet {
			_, _ = l.CorporationWallets.Get(ctx, id)
		}
	}
	return nil
}
