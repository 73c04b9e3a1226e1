package events

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// SourceBanking is the source of the changes the gateway finds by polling
// the banking upstream, which announces nothing itself. Like the gateway's
// own events (SourceGateway) they belong to one corporation.
const SourceBanking = "banking"

// BankingSide reports whether events of source are about one corporation's
// banking (SourceGateway, SourceBanking): they share visibility, dedupe
// keys and refetch by stream position, unlike the merchant's payments
// events.
func BankingSide(source string) bool { return source == SourceGateway || source == SourceBanking }

// Payload keys every banking-side event (SourceGateway, SourceBanking)
// carries, so that subscriptions can scope it and clients can fetch what it
// is about.
const (
	// PayloadCorporation is the upstream id of the corporation the event
	// belongs to: its visibility.
	PayloadCorporation = "corporation_id"
	// PayloadSubject is the global (relay) id of the entity the event is
	// about: Event.subject.
	PayloadSubject = "subject"
)

// ChangeID is the event id of the announcement that the entity with global
// id subject reached version (an opaque digest of what changed, or
// "created" for its first sighting). Every announcer of one change, whether
// the mutation that made it or a poll that found it, on any replica,
// derives the same id, and the stream keeps the first.
func ChangeID(subject, version string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("fingraph:change:"+subject+"@"+version)).String()
}

// NewChange is the event announcing a banking-side change (source
// SourceGateway or SourceBanking) under id: the change of corporation
// corporationID (its visibility) to the entity with global id subject
// (Event.subject; "" when there is none to show). payload gets the two
// keys every banking-side event carries; it is kept as the event's payload.
func NewChange(source, id, name, corporationID, subject string, payload map[string]any, at time.Time) (Event, error) {
	payload[PayloadCorporation] = corporationID
	if subject != "" {
		payload[PayloadSubject] = subject
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return Event{}, err
	}
	return Event{Source: source, ID: id, Name: name, Payload: body, CreatedAt: at.UTC()}, nil
}
