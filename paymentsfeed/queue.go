// Package paymentsfeed brings the payments upstream's events onto the event
// bus (package events), durably and deduplicated:
//
//	webhook {id,name,createdAt} -> Intake -> stream WEBHOOKS (Queue; Nats-Msg-Id = event id)
//	  -> Enricher: GET the event (and its pending action) from the upstream
//	  -> events.Bus: stream EVENTS (Nats-Msg-Id = event id) -> every replica
//
// A webhook body is only ever an id: the content is always fetched with the
// gateway's own token, so a forged webhook cannot inject data. The
// Reconciler polls the upstream's event listing for what webhooks missed or
// dropped, and publishes it on EVENTS, deduplicated by event id like the
// enricher's. Unknown remembers the ids the upstream does not know, which
// the intake and the enricher share.
//
// The bus, the events' vocabulary and their readers are package events; this
// package only feeds it. It knows no GraphQL.
package paymentsfeed

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
)

// The stream of stored webhooks and its subjects.
const (
	WebhooksStream = "WEBHOOKS"
	webhookSubject = "fingraph.webhooks."
)

// Queue is the WEBHOOKS stream: the webhooks the intake stored, each until
// the enricher has published its event. Replicas share it, and its
// Nats-Msg-Id (the event id) drops a repeat within events.Dedupe.
type Queue struct {
	js jetstream.JetStream

	// storing counts the webhooks being stored now, and burstAt
	// is when one started while another was in flight (Unix nanoseconds):
	// a burst of webhooks, during which the enricher yields.
	storing atomic.Int64
	burstAt atomic.Int64
}

// QueueOption configures NewQueue.
type QueueOption func(*queueOptions)

type queueOptions struct{ replicas int }

// WithReplicas keeps n copies of the stream (on a NATS cluster); an
// existing stream with fewer is raised to n.
func WithReplicas(n int) QueueOption { return func(o *queueOptions) { o.replicas = n } }

// NewQueue creates or updates the WEBHOOKS stream.
func NewQueue(ctx context.Context, js jetstream.JetStream, opts ...QueueOption) (*Queue, error) {
	o := queueOptions{replicas: 1}
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       WebhooksStream,
		Subjects:   []string{webhookSubject + ">"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: events.Dedupe,
		MaxAge:     24 * time.Hour,
		Replicas:   o.replicas,
	}); err != nil {
		return nil, fmt.Errorf("paymentsfeed: stream %s: %w", WebhooksStream, err)
	}
	return &Queue{js: js}, nil
}

// webhook is what the intake stores: only what the upstream's webhook says.
type webhook struct {
	Source    string    `json:"source"`
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// store stores an announced event for the intake; a repeat of the same id
// within events.Dedupe is dropped by the stream (Nats-Msg-Id, "<source>:<id>"
// as EVENTS keys payments events). The message is built by appendJSON, and
// the header set directly, rather than through encoding/json and a publish
// option (an id or name that is not a token, which the intake refuses,
// would go through encoding/json). A store that starts while another is in
// flight marks a burst, during which the enricher yields
// (Enricher.BusyWorkers); webhooks that come one at a time, however
// steadily, do not.
func (q *Queue) store(ctx context.Context, w webhook) error {
	if q.storing.Add(1) > 1 {
		q.burstAt.Store(time.Now().UnixNano())
	}
	defer q.storing.Add(-1)
	var data []byte
	if events.IsToken(w.Source) && events.IsToken(w.ID) && events.IsToken(w.Name) {
		data = w.appendJSON(make([]byte, 0, 128))
	} else {
		data, _ = json.Marshal(w)
	}
	m := &nats.Msg{
		Subject: webhookSubject + w.Source,
		Data:    data,
		Header:  nats.Header{jetstream.MsgIDHeader: []string{w.Source + ":" + w.ID}},
	}
	_, err := q.js.PublishMsg(ctx, m)
	return err
}
