package resolvers

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// eventScope is what one session may see of the event stream (docs/events.md,
// "Who sees what"): the merchant's payments events, and the banking-side
// events (sources gateway and banking) of some corporations.
type eventScope struct {
	// payments lets the merchant's payments events through: payments
	// operators that are staff or API clients. A person or introducer
	// never sees them, whatever FINGRAPH_PAYMENTS_OPERATORS says: they
	// are the merchant's, not a corporation's.
	payments bool
	// allCorporations lets every corporation's banking-side events
	// through: staff, whom the bank's access policy lets read every
	// corporation.
	allCorporations bool
	// corporations are the corporations whose banking-side events pass:
	// a person's or API client's own, an introducer's introduced ones.
	corporations map[string]bool
}

// errCustomerEvents refuses the event stream to a payments customer
// session: it has no corporation, and payments events are the merchant's.
func errCustomerEvents() error {
	return gqlerr.Forbiddenf("a payments customer session has no live events: events belong to the merchant's operators and to corporations")
}

// eventScope reads what the request's session may see of the event
// stream. An introducer's corporations are known to the banking upstream
// only: they are read once here (GET /corporations, every page), so once
// per subscription or history page (a refetch by id asks the request's
// Corporation read instead: maySeeEvent).
func (r *Resolver) eventScope(ctx context.Context) (*eventScope, error) {
	s := session.From(ctx)
	if s == nil {
		return nil, gqlerr.Unauthenticatedf("sign in first")
	}
	sc := &eventScope{corporations: map[string]bool{}, payments: r.seesPayments(s)}
	switch s.Kind {
	case session.Customer:
		return nil, errCustomerEvents()
	case session.Staff:
		sc.allCorporations = true
	case session.Introducer:
		ids, err := r.introducedCorporations(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			sc.corporations[id] = true
		}
	}
	if s.Kind != session.Introducer && s.CorporationID != "" {
		sc.corporations[s.CorporationID] = true
	}
	return sc, nil
}

// seesPayments reports whether s sees the merchant's payments events:
// staff and API clients the policy lets operate payments (staff and the
// merchant corporation's API clients by default; every one for a resolver
// built without a policy), never another kind.
func (r *Resolver) seesPayments(s *session.Session) bool {
	if s == nil || (s.Kind != session.Staff && s.Kind != session.APIClient) {
		return false
	}
	return r.Policy == nil || r.Policy.MayOperatePayments(s)
}

// sees reports whether the scope lets e through.
func (sc *eventScope) sees(e *events.Event) bool {
	switch {
	case e.Source == events.SourcePayments:
		return sc.payments
	case events.BankingSide(e.Source):
		return sc.allCorporations || sc.corporations[e.PayloadString(events.PayloadCorporation)]
	}
	return false
}

// busScope is the scope as the bus reads it: the subjects of its events.
func (sc *eventScope) busScope() *events.Scope {
	out := &events.Scope{Payments: sc.payments, AllCorporations: sc.allCorporations}
	if !sc.allCorporations {
		out.Corporations = make([]string, 0, len(sc.corporations))
		for c := range sc.corporations {
			out.Corporations = append(out.Corporations, c)
		}
		slices.Sort(out.Corporations)
	}
	return out
}

// eventsCursor is Query.eventsCursor: the cursor of the newest event the
// session's scope sees, which moves only with its own events.
func (r *Resolver) eventsCursor(ctx context.Context) (string, error) {
	sc, err := r.eventScope(ctx)
	if err != nil {
		return "", err
	}
	r.bankBaseline(ctx)
	return r.Events.CursorFor(ctx, events.Filter{Scope: sc.busScope()})
}

// match narrows a filter's match to the scope.
func (sc *eventScope) match(match func(*events.Event) bool) func(*events.Event) bool {
	return func(e *events.Event) bool {
		return sc.sees(e) && (match == nil || match(e))
	}
}

// introducedCorpPages bounds the pages of corporations an introducer's
// scope reads (100 each).
const introducedCorpPages = 20

// introducedCorporations lists the ids of the corporations the session's
// principal sees: for an introducer, those it introduced (the upstream
// scopes GET /corporations so).
func (r *Resolver) introducedCorporations(ctx context.Context) ([]string, error) {
	var ids []string
	opts := banking.ListOptions{Limit: 100}
	for range introducedCorpPages {
		page, err := r.Banking.Corporations.List(ctx, &opts)
		if errors.Is(err, banking.ErrOffsetNotShown) {
			break // an upstream without offset paging: the first page is all
		}
		if err != nil {
			return nil, err
		}
		for _, c := range page.List {
			if c != nil {
				ids = append(ids, c.ID)
			}
		}
		if !page.Meta.HasMore || len(page.List) == 0 || !r.Banking.Offers(banking.OffsetPaging) {
			break
		}
		opts.Offset += len(page.List)
	}
	return ids, nil
}

// maySeeEvent is eventScope(ctx).sees(e) for one event read back by id:
// an introducer's corporation is checked through the operation's
// Corporation read (one listing for all the events of a nodes(ids:)), not
// by a listing of its own per event.
func (r *Resolver) maySeeEvent(ctx context.Context, e *events.Event) (bool, error) {
	if s := session.From(ctx); s != nil && s.Kind == session.Introducer {
		corp := e.PayloadString(events.PayloadCorporation)
		if !events.BankingSide(e.Source) || corp == "" {
			return false, nil
		}
		c, err := loaders.For(ctx).Corporation.Get(ctx, corp)
		if hidesExistence(err) {
			return false, nil
		}
		return c != nil && c.ID == corp, err
	}
	sc, err := r.eventScope(ctx)
	if err != nil {
		return false, err
	}
	return sc.sees(e), nil
}

// paymentsScope is the scope of the subscriptions that follow payments
// events only (orderUpdates, onboarding): refused to a session that never
// sees them, rather than a stream that stays silent.
func (r *Resolver) paymentsScope(ctx context.Context) (*eventScope, error) {
	sc, err := r.eventScope(ctx)
	if err != nil {
		return nil, err
	}
	if !sc.payments {
		return nil, gqlerr.Forbiddenf("payments events reach the merchant's staff and API clients only; subscribe to events for your corporations' events")
	}
	return sc, nil
}

// sharedSubject is an event's subject as read once for every subscriber
// that gets the event (model.Event.Shared): one upstream read per change
// on a replica, whatever the number of subscriptions, sockets and sessions.
//
// The read is kept per kind of principal: what one kind cannot see (an
// upstream 404 or 403 for its credentials) is never shown as null to
// another kind, nor what one kind can see to another without its own read.
type sharedSubject struct {
	mu    sync.Mutex
	nodes map[session.Kind]model.Node
}

// eventSubject is Event.subject: the payload's subject (a global id) of a
// banking-side event, the order of a payments event, read through the
// node path; nil when there is none or the caller may not see it.
//
// A streamed event's subject is read once per kind of principal, with the
// credentials of the first of its subscribers of that kind to ask, and
// shown to each of the others of that kind through its own access check,
// which needs no upstream call: the event reached it, so its scope sees the event's corporation (or the merchant's
// payments), and its role must be one the node's kind allows. A read that
// fails is not kept: the next subscriber reads again.
func (r *Resolver) eventSubject(ctx context.Context, e *model.Event) (model.Node, error) {
	var id string
	switch {
	case e.GatewayCursor != "":
		id, _ = e.Payload[events.PayloadSubject].(string)
	case e.OrderID != nil:
		id = relay.ID(relay.Order, *e.OrderID)
	}
	if id == "" {
		return nil, nil
	}
	ref, err := relay.Decode(id)
	if err != nil {
		return nil, nil // not a global id: nothing to show
	}
	if r.Policy != nil && r.Policy.Allows(ctx, nodeRoles[ref.Kind]) != nil {
		return nil, nil
	}
	shared, _ := e.Shared.(*sharedSubject)
	if shared == nil {
		return r.readSubject(ctx, ref)
	}
	var kind session.Kind
	if s := session.From(ctx); s != nil {
		kind = s.Kind
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if n, ok := shared.nodes[kind]; ok {
		return n, nil
	}
	n, err := r.readSubject(ctx, ref)
	if err != nil {
		return nil, err
	}
	if shared.nodes == nil {
		shared.nodes = map[session.Kind]model.Node{}
	}
	shared.nodes[kind] = n
	return n, nil
}

func (r *Resolver) readSubject(ctx context.Context, ref relay.Ref) (model.Node, error) {
	n, err := r.loadNode(ctx, ref)
	if hidesExistence(err) {
		return nil, nil
	}
	return n, err
}
