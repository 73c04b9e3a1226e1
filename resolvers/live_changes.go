package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// The gateway's banking mutations announce their change under the id the
// banking poller gives the same change when a poll finds it
// (events.ChangeID(subject, version), versions from events/versions.go), so that
// the stream keeps one announcement.

// walletCreatedID is the event id of the announcement of new wallets: the
// id a poll that finds the one wallet among them whose creation it
// announces (events.AnnouncesCreation) gives it, so that it is announced
// once. Several such wallets at once have no single such id.
func walletCreatedID(corporationID string, list []*banking.Wallet) string {
	var real []string
	for _, w := range list {
		if events.AnnouncesCreation(w) {
			real = append(real, w.ID)
		}
	}
	if len(real) != 1 {
		return uuid.NewString()
	}
	return events.ChangeID(relay.ID(relay.Wallet, corporationID, real[0]), events.Created)
}

// newPublisher is the bus's Publish that says whether the stream took the
// event or already held one with its id, and since when.
type newPublisher interface {
	PublishNew(ctx context.Context, e events.Event) (taken bool, held time.Time, err error)
}

// announceChange is publishGatewayEvent under the change's id: the entity
// with global id subject reached version. A creation is announced once,
// whoever announces it first. Any other version can come back (a person
// blocked, restored and blocked again within the upstream's one-second
// timestamps): when the stream already holds an announcement under the id
// stored before this operation began, the mutation's change is announced
// again under an id of its own, so that none of the gateway's own changes
// goes unannounced. One stored since is this very change, read by a poll
// between the upstream's answer and this announcement: it stands alone.
func (r *Resolver) announceChange(ctx context.Context, name, corpID, subject, version string, payload map[string]any) {
	id := events.ChangeID(subject, version)
	pub, ok := r.Events.(newPublisher)
	if version == events.Created || !ok {
		r.publishGatewayEventID(ctx, id, name, corpID, subject, payload)
		return
	}
	e, err := r.newGatewayEvent(ctx, id, name, corpID, subject, payload)
	if err != nil {
		r.Logger.WarnContext(ctx, "could not publish a gateway event", "name", name, "err", err)
		return
	}
	taken, held, err := pub.PublishNew(ctx, e)
	if err == nil && !taken && !announcedSinceStart(ctx, held) {
		e.ID = uuid.NewString()
		_, _, err = pub.PublishNew(ctx, e)
	}
	if err != nil {
		r.Logger.WarnContext(ctx, "could not publish a gateway event", "name", name, "err", err)
	}
}

// announcedSinceStart reports whether held, when an announcement the
// stream holds was stored, is not before ctx's operation began: nothing
// but a poll that read this operation's change can have announced its
// version since. The stream's clock is compared with the gateway's; on a
// cluster a skew of more than the few milliseconds between a change and its
// announcement only costs a second announcement of the same state.
func announcedSinceStart(ctx context.Context, held time.Time) bool {
	if held.IsZero() || !graphql.HasOperationContext(ctx) {
		return false
	}
	return !held.Before(graphql.GetOperationContext(ctx).Stats.OperationStart)
}
