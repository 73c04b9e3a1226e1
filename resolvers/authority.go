package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/passwords"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Authority is what resolvers need of session.Authority: to end, on every
// replica, the sessions and streams that an authority admitted when a
// mutation ends that authority.
type Authority interface {
	// Revoke ends every session under grant except the one with id keep.
	Revoke(ctx context.Context, grant string, why session.Reason, keep string) error
	// RequireProof makes every session under grant prove its credential
	// to the upstream again.
	RequireProof(ctx context.Context, grant string, why session.Reason) error
	// Announce and Withdraw mark an end of grant under way upstream.
	Announce(ctx context.Context, grant string, why session.Reason) error
	Withdraw(ctx context.Context, grant string) error
}

// personAuthorityEnded ends the sessions of person id after a change of her
// password, roles or block made upstream. keep is the session that made
// the change, which stays (a password changed in one session keeps that
// one); "" keeps none. The change is made by then, so a failure to record
// its end is logged, not answered: the sessions' store is the same
// JetStream, so a replica that cannot record the end cannot serve those
// sessions either.
func (r *Resolver) personAuthorityEnded(ctx context.Context, personID string, why session.Reason, keep string) {
	if r.Authority == nil || personID == "" {
		return
	}
	if err := r.Authority.Revoke(context.WithoutCancel(ctx), session.PersonGrant(personID), why, keep); err != nil {
		r.Logger.ErrorContext(ctx, "could not end the sessions of a changed person", "reason", string(why), "err", err)
	}
}

// personEndAnnounced announces an end of person id's authority about to be
// made upstream (a block), so that a session of hers the upstream refuses
// before the end is recorded ends with why. It returns the function that
// takes the announcement back, for when the change failed.
func (r *Resolver) personEndAnnounced(ctx context.Context, personID string, why session.Reason) (withdraw func()) {
	if r.Authority == nil || personID == "" {
		return func() {}
	}
	grant := session.PersonGrant(personID)
	if err := r.Authority.Announce(context.WithoutCancel(ctx), grant, why); err != nil {
		r.Logger.WarnContext(ctx, "could not announce the end of a person's authority", "reason", string(why), "err", err)
	}
	return func() {
		if err := r.Authority.Withdraw(context.WithoutCancel(ctx), grant); err != nil {
			r.Logger.WarnContext(ctx, "could not withdraw an announced end of a person's authority", "err", err)
		}
	}
}

// apiKeyDeleted makes every API-client session of corporation prove its key
// to the upstream: the gateway cannot tell which sessions the deleted key
// opened (the upstream names keys by id, sessions hold its tokens), the
// upstream can.
func (r *Resolver) apiKeyDeleted(ctx context.Context, corporationID string) {
	if r.Authority == nil || corporationID == "" {
		return
	}
	if err := r.Authority.RequireProof(context.WithoutCancel(ctx), session.APIKeysGrant(corporationID), session.ReasonAPIKeyDeleted); err != nil {
		r.Logger.ErrorContext(ctx, "could not end the sessions of a deleted API key", "err", err)
	}
}

// keepIfOwn is the session to keep when s changes person id: s itself when
// it is that person's.
func keepIfOwn(s *session.Session, personID string) string {
	if s != nil && s.Kind == session.Person && s.PersonID == personID {
		return s.ID
	}
	return ""
}

// checkNewPassword refuses a new password that is the e-mail address of
// the account it is for (the rules that need no upstream read ran with the
// input, see validator.newPassword). pw nil is no password change. The
// address is read, never the password changed, before the refusal.
func (r *Resolver) checkNewPassword(ctx context.Context, s *session.Session, personID string, pw *string) error {
	if pw == nil {
		return nil
	}
	var p *banking.Person
	var err error
	if s != nil && s.Kind == session.Person && (personID == "" || personID == s.PersonID) {
		p, err = loaders.For(ctx).Me.Get(ctx, loaders.Whole{})
	} else {
		p, err = r.Banking.Persons.Get(ctx, personID)
	}
	if err != nil {
		return err
	}
	if rule := passwords.Check(*pw, passwords.Account{Email: p.Email}); rule != "" {
		return gqlerr.BadInput("input.password", "input.password %s", rule)
	}
	return nil
}
