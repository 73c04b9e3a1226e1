package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Lookup reads the event at the stream position of cursor (an event's
// Cursor, as its Node id keeps it) when it is the event id
// from source (either banking-side source, for one of them: they share ids,
// see msgID), nil otherwise (gone with the retention, another event there
// after a reset). Events the gateway makes have no upstream to read them
// back from: their position in the stream, kept in their Node id, is
// where they are refetched.
//
// A cursor that is not one of this stream's (another epoch, or a numeric
// position of the older form) finds nothing.
func (b *Bus) Lookup(ctx context.Context, cursor string, source, id string) (*Event, error) {
	st, err := b.js.Stream(ctx, EventsStream)
	if err != nil {
		return nil, fmt.Errorf("events: lookup: %w", err)
	}
	codec := b.codec(epochOf(st.CachedInfo()))
	seq, err := codec.open(cursor)
	if err != nil || seq == 0 {
		return nil, nil
	}
	msg, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("events: lookup: %w", err)
	}
	b.reads.Add(1)
	e, ok := decodeAt(msg.Data, seq, codec)
	if !ok || e.ID != id || (e.Source != source && !(BankingSide(source) && BankingSide(e.Source))) {
		return nil, nil
	}
	return e, nil
}
