package resolvers

import (
	"context"

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
// event or already held one with its id.
type newPublisher interface {
	PublishNew(ctx context.Context, e events.Event) (bool, error)
}

// announceChange is publishGatewayEvent under the change's id: the entity
// with global id subject reached version. A creation is announced once,
// whoever announces it first. Any other version can come back (a person
// blocked, restored and blocked again within the upstream's one-second
// timestamps): when the stream already holds an announcement under the id,
// the mutation's change is announced again under an id of its own, so that
// none of the gateway's own changes goes unannounced.
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
	fresh, err := pub.PublishNew(ctx, e)
	if err == nil && !fresh {
		e.ID = uuid.NewString()
		_, err = pub.PublishNew(ctx, e)
	}
	if err != nil {
		r.Logger.WarnContext(ctx, "could not publish a gateway event", "name", name, "err", err)
	}
}
