package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// personTransition blocks or restores a person, then reads it back: the
// upstream answers only the id. A move that ends the person's authority
// (ends: a block) is announced once the gateway's own checks pass, before
// the upstream call, so that a session of hers the upstream refuses before
// the end is recorded ends for that reason; the end is recorded as soon as
// the upstream made the move, and the announcement withdrawn if it did not.
func (r *Resolver) personTransition(ctx context.Context, id, event string, move func(context.Context, string) (string, error), ends session.Reason) (*model.Person, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	if s.Kind == session.Introducer {
		return nil, gqlerr.Forbiddenf("introducers cannot manage persons")
	}
	var v validator
	v.required("input.id", id, 100)
	if v.err != nil {
		return nil, v.err
	}
	withdraw := func() {}
	if ends != "" {
		withdraw = r.personEndAnnounced(ctx, id, ends)
	}
	if _, err := move(ctx, id); err != nil {
		withdraw()
		return nil, err
	}
	if ends != "" {
		r.personAuthorityEnded(ctx, id, ends, "")
	}
	p, err := r.Banking.Persons.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	r.announceChange(ctx, event, loaders.CorporationOf(p), relay.ID(relay.Person, p.ID), events.PersonVersion(p), map[string]any{"person_id": p.ID, "is_blocked": events.IsPersonBlocked(p)})
	return toPerson(p), nil
}

// personOnly refuses "me" operations for sessions that are not persons,
// before the upstream's 403.
func personOnly(ctx context.Context) error {
	s, err := mustSession(ctx)
	if err != nil {
		return err
	}
	if s.Kind != session.Person {
		return gqlerr.Forbiddenf("only persons have a profile to change")
	}
	return nil
}

// primeCorporationPersons answers Corporation.persons of a whole listing
// with the request's one read of the person listing, started as soon as the
// query is known to ask for persons: the loader's time window alone could
// split the corporations' keys over two batches on a busy machine.
func (r *Resolver) primeCorporationPersons(ctx context.Context, corps []*banking.Corporation) error {
	l := loaders.For(ctx)
	byCorp, err := l.PersonsByCorporation.Get(ctx, loaders.Whole{})
	if err != nil {
		return err
	}
	for _, c := range corps {
		ps := byCorp[c.ID]
		if c.AccountID != "" {
			ps = append(ps, byCorp[c.AccountID]...)
		}
		l.CorporationPersons.Prime(ctx, c.ID, ps)
	}
	return nil
}
