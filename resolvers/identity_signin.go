package resolvers

import (
	"context"
	"slices"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// signIn runs one upstream sign-in step. The call gets a token store of its
// own, never the current session's, so signing in while signed in cannot
// write a new principal's token into the old session. The password is used
// for this call only and never stored.
func (r *Resolver) signIn(ctx context.Context, in model.SignInInput) (model.SignInResult, error) {
	var v validator
	kind := map[model.SignInKind]session.Kind{
		model.SignInKindStaff: session.Staff, model.SignInKindPerson: session.Person,
		model.SignInKindIntroducer: session.Introducer, model.SignInKindAPIKey: session.APIClient,
	}[in.Kind]
	if in.Kind == model.SignInKindAPIKey {
		v.required("input.apiKey", deref(in.APIKey), 512)
	} else {
		v.required("input.email", deref(in.Email), 320)
		v.required("input.password", deref(in.Password), 512)
		if in.Kind == model.SignInKindPerson && in.DeviceFingerprint == nil {
			v.fail("input.deviceFingerprint", "input.deviceFingerprint is required to sign a person in")
		}
		if in.ChallengeID != nil && deref(in.TwoFactorCode) == "" {
			v.fail("input.twoFactorCode", "input.twoFactorCode is required with input.challengeId")
		}
	}
	if v.err != nil {
		return nil, v.err
	}

	tokens := banking.NewTokenStore("")
	uctx := banking.WithTokenSource(ctx, tokens)
	req := banking.SignInRequest{Email: deref(in.Email), Password: deref(in.Password),
		TwoFactorCode: deref(in.TwoFactorCode), ChallengeID: deref(in.ChallengeID)}
	if in.DeviceFingerprint != nil {
		req.Fingerprint = *in.DeviceFingerprint
	}
	var res *banking.SignInResult
	var err error
	switch in.Kind {
	case model.SignInKindStaff:
		res, err = r.Banking.Auth.SignInStaff(uctx, req)
	case model.SignInKindPerson:
		res, err = r.Banking.Auth.SignInPerson(uctx, req)
	case model.SignInKindIntroducer:
		res, err = r.Banking.Auth.SignInIntroducer(uctx, req)
	case model.SignInKindAPIKey:
		res, err = r.Banking.Auth.SignInAPIKey(uctx, banking.Secret(deref(in.APIKey)))
	}
	if err != nil {
		return nil, err
	}
	if res.TwoFactor != nil {
		return toTwoFactor(res.TwoFactor), nil
	}

	sess := &session.Session{Kind: kind}
	// Learn who signed in, so the session knows its person and corporation
	// (and the viewer fields of this response cost nothing more).
	l := loaders.For(ctx)
	switch kind {
	case session.Person:
		me, err := r.Banking.Persons.Me(uctx)
		if err != nil {
			return nil, err
		}
		sess.PrincipalID, sess.PersonID, sess.CorporationID = me.ID, me.ID, loaders.CorporationOf(me)
		sess.Account = SignInAccount(in.Kind, deref(in.Email))
		l.Me.Prime(ctx, loaders.Whole{}, me)
	case session.APIClient:
		c, err := r.Banking.Corporations.Current(uctx)
		if err != nil {
			return nil, err
		}
		sess.CorporationID = c.ID
		l.CurrentCorporation.Prime(ctx, loaders.Whole{}, c)
	}
	tok, _ := tokens.Token(ctx)
	sess.BankingToken, sess.BankingTokenAt = session.Secret(tok), time.Now().UTC()
	return r.beginSession(ctx, sess)
}

// signInCustomer checks a payments customer key by reading the customer
// with it, then starts a CUSTOMER session.
func (r *Resolver) signInCustomer(ctx context.Context, in model.SignInCustomerInput) (*model.SignedIn, error) {
	var v validator
	v.required("input.customerKey", in.CustomerKey, 512)
	if v.err != nil {
		return nil, v.err
	}
	c, err := r.Payments.Customers.Get(payments.WithCustomerKey(ctx, in.CustomerKey), "me")
	if payments.IsUnauthorized(err) || payments.IsForbidden(err) || payments.IsNotFound(err) {
		return nil, gqlerr.Unauthenticatedf("the customer key was not accepted")
	}
	if err != nil {
		return nil, err
	}
	return r.beginSession(ctx, &session.Session{Kind: session.Customer, PrincipalID: c.ID, CustomerKey: session.Secret(in.CustomerKey)})
}

func (r *Resolver) beginSession(ctx context.Context, sess *session.Session) (*model.SignedIn, error) {
	token, err := session.Begin(ctx, sess)
	if err != nil {
		return nil, gqlerr.InternalError(err)
	}
	return &model.SignedIn{SessionToken: token, CsrfToken: sess.CSRFToken, Viewer: toViewer(sess)}, nil
}

// viewerPermissions are the upstream's granted permissions (persons) and
// the gateway's own.
func (r *Resolver) viewerPermissions(ctx context.Context, s *session.Session) ([]string, error) {
	out := []string{}
	if s.Kind == session.Person {
		me, err := loaders.For(ctx).Me.Get(ctx, loaders.Whole{})
		if err != nil {
			return nil, err
		}
		for name, granted := range me.Permissions {
			if granted {
				out = append(out, name)
			}
		}
	}
	if r.Policy.MayOperatePayments(s) {
		out = append(out, "payments.operate")
	}
	slices.Sort(out)
	return out, nil
}
