package resolvers

import (
	"context"
	"sync"

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
// request (the CurrentCorporation memo).
//
// Every field below the corporation that reads the upstream needs only the
// corporation's id, and the session already holds it (learnt at sign-in:
// GET /persons/me for a person, /corporations/current for an API client).
// So before waiting for /corporations/current, this starts the selected
// children's reads for that id through the same loaders the children use;
// when the children run, their loads find those reads in flight or done.
// The screen then costs one level of upstream calls instead of two, and no
// call more: each read is one a child would make with the same key. The
// dashboard's reads (settings, wallets, the first person page, the card
// listing) go out at once, beside /corporations/current; the others wait
// for their loader's batch window (1 ms by default) first.
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
	c, err := l.CurrentCorporation(ctx)
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
	var (
		wg     sync.WaitGroup
		thunks []func()
	)
	background := func(read func(context.Context) error) {
		wg.Add(1)
		l.Go(func() { defer wg.Done(); _ = read(ctx) })
	}
	pageStarted := false // persons and cardholders read the same page
	personsPage := func() {
		if !pageStarted {
			pageStarted = true
			background(l.ReadPersonsPage)
		}
	}
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, corporationTypes) {
		switch f.Name {
		case "settings":
			thunks = appendThunk(thunks, l.StartSettings(ctx, id))
		case "persons":
			// The listing at once, from its first page, which
			// cardholders read too.
			pageStarted = true
			thunks = appendThunk(thunks, l.StartPersons(ctx, id))
		case "wallets", "wallet":
			thunks = appendThunk(thunks, l.StartWallets(ctx, id))
		case "walletRequisites":
			thunks = appendThunk(thunks, l.CorporationRequisites.Load(ctx, id))
		case "invoices":
			thunks = appendThunk(thunks, l.CorporationInvoices.Load(ctx, id))
		case "limits":
			thunks = appendThunk(thunks, l.CorporationLimits.Load(ctx, id))
		case "kycDocuments":
			thunks = appendThunk(thunks, l.CorporationKYC.Load(ctx, id))
		case "cards":
			background(func(ctx context.Context) error { _, err := l.AllCards(ctx); return err })
			// The cardholders come from the first page of the person
			// listing (the Person loader), read after the cards otherwise.
			for _, g := range graphql.CollectFields(op, f.Selections, []string{"Card", "Node"}) {
				if g.Name == "cardholder" {
					personsPage()
					break
				}
			}
		}
		// apiKeys needs a staff session, which has no current
		// corporation; the corporation's own fields come with
		// /corporations/current: nothing to start for either.
	}
	return func() {
		for _, wait := range thunks {
			wait()
		}
		wg.Wait()
	}
}

// appendThunk keeps a started load's thunk, so that settle can wait for it.
func appendThunk[V any](thunks []func(), thunk func() (V, error)) []func() {
	return append(thunks, func() { _, _ = thunk() })
}
