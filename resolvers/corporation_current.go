package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
)

// corporationTypes are the types a fragment on the current corporation may
// name (the type and its interface), as gqlgen collects its fields.
var corporationTypes = []string{"Corporation", "Node"}

// currentCorporation resolves currentCorporation and viewer.corporation for
// a person or API client session: GET /corporations/current, once per
// operation (the CurrentCorporation read).
//
// Every field below the corporation that reads the upstream needs only the
// corporation's id, and the session already holds it (learnt at sign-in:
// GET /persons/me for a person, /corporations/current for an API client).
// So before waiting for /corporations/current, this starts the selected
// children's reads for that id, the reads the children then get: the screen
// costs one level of upstream calls instead of two, and no call more.
//
// The corporation itself is still the upstream's answer, so a corporation
// the upstream refuses or does not find fails here, on this field's path,
// with the upstream's error, exactly as when the children waited: the
// children never run, and the reads started for them are waited for (not
// left running past the response) and dropped. Should the upstream name
// another corporation than the session's (the person moved), the children
// read that one's data with its id and the early reads are only wasted.
func currentCorporation(ctx context.Context, s *session.Session) (*model.Corporation, error) {
	l := loaders.For(ctx)
	settle := startCorporationReads(ctx, l, s.CorporationID)
	c, err := l.CurrentCorporation.Get(ctx, loaders.Whole{})
	if err != nil {
		settle()
		return nil, err
	}
	return toCorporation(c), nil
}

// startCorporationReads starts, for corporation id, the upstream reads of
// the fields selected below the current field (a corporation), and returns
// a function that waits until they are done. It starts nothing when id is
// empty (a person without a corporation).
func startCorporationReads(ctx context.Context, l *loaders.Loaders, id string) (settle func()) {
	if id == "" || graphql.GetFieldContext(ctx) == nil {
		return func() {}
	}
	var started []func()
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, corporationTypes) {
		switch f.Name {
		case "settings":
			started = startRead(ctx, started, &l.CorporationSettings, id)
		case "persons":
			// The whole listing, from its first page, which cardholders
			// read too.
			started = startRead(ctx, started, &l.PersonsByCorporation, loaders.Whole{})
		case "wallets", "wallet":
			started = startRead(ctx, started, &l.CorporationWallets, id)
		case "walletRequisites":
			started = startRead(ctx, started, &l.CorporationRequisites, id)
		case "invoices":
			started = startRead(ctx, started, &l.CorporationInvoices, id)
		case "limits":
			started = startRead(ctx, started, &l.CorporationLimits, id)
		case "kycDocuments":
			started = startRead(ctx, started, &l.CorporationKYC, id)
		case "cards":
			started = startRead(ctx, started, &l.Cards, loaders.Whole{})
			// The cardholders come from the first page of the person
			// listing, read after the cards otherwise.
			for _, g := range graphql.CollectFields(op, f.Selections, []string{"Card", "Node"}) {
				if g.Name == "cardholder" {
					started = startRead(ctx, started, &l.PersonsPage, loaders.Whole{})
					break
				}
			}
		}
		// apiKeys needs a staff session, which has no current
		// corporation; the corporation's own fields come with
		// /corporations/current: nothing to start for either.
	}
	return func() {
		for _, wait := range started {
			wait()
		}
	}
}

// startRead starts r's read of key and adds a wait for it to started.
func startRead[K comparable, V any](ctx context.Context, started []func(), r *loaders.Read[K, V], key K) []func() {
	r.Start(ctx, key)
	return append(started, func() { _, _ = r.Get(ctx, key) })
}
