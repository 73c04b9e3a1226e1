package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Seq is the event's position in the EVENTS stream, 0 for an event that
// was not read from it.
func (e *Event) Seq() uint64 { return e.seq }

// Lookup reads the event at stream position seq when it is the event id
// from source (either banking-side source, for one of them: they share ids,
// see msgID), nil otherwise (gone with the retention, another event there
// after a reset). Events the gateway makes have no upstream to read them
// back from: their position in the stream, kept in their Node id, is
// where they are refetched.
func (b *Bus) Lookup(ctx context.Context, seq uint64, source, id string) (*Event, error) {
	if seq == 0 {
		return nil, nil
	}
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return nil, fmt.Errorf("events: lookup: %w", err)
	}
	msg, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("events: lookup: %w", err)
	}
	e, ok := decodeAt(msg.Data, seq, epochOf(st.CachedInfo()))
	if !ok || e.ID != id || (e.Source != source && !(BankingSide(source) && BankingSide(e.Source))) {
		return nil, nil
	}
	return e, nil
}
