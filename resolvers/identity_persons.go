package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/graph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// personTransition blocks or restores a person, then reads it back: the
// upstream answers only the id.
func (r *Resolver) personTransition(ctx context.Context, id string, move func(context.Context, string) (string, *banking.Response, error)) (*model.Person, error) {
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
	if _, _, err := move(ctx, id); err != nil {
		return nil, err
	}
	p, _, err := r.Banking.Persons.Get(ctx, id)
	if err != nil {
		return nil, err
	}
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
