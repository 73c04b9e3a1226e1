package paymentsfeed

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/ratelimit"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// Intake receives the payments upstream's webhooks. It stores each in the
// Queue and only then answers 2xx; when JetStream cannot take it, it
// answers 503 so that the sender slows down and retries.
//
// The spec shows no signature on webhooks, so a delivery cannot be
// verified at the door; what can be refused cheaply is, before anything
// else: a body that is not a webhook, an id that is not an event id (the
// spec's event ids are UUIDs), a repeat of an id the upstream did not know
// (Unknown), and a repeat of an id this intake has just stored (both
// acknowledged without being stored). A well-formed new event id is always
// stored, without a limit: the upstream's real events never wait behind a
// flood from its own address, nor behind a limit during its own bursts. A
// forged one costs one store and one event read (which tells it is
// forged). The per-sender limit (PerSecond, Burst; 429 with Retry-After
// past them) applies to the deliveries refused, so a sender of garbage is
// slowed down without a real event ever being.
type Intake struct {
	// Queue is where webhooks are stored.
	Queue  *Queue
	Logger *slog.Logger
	// Unknown, when set, holds the ids the upstream answered 404 for.
	Unknown *Unknown
	// PerSecond and Burst bound the refused deliveries of one sending
	// address (defaults 200 and 400).
	PerSecond float64
	Burst     int
	// ClientAddr, when set, names a request's sender (the gateway's rule:
	// behind trusted proxies, the client they forwarded for); unset, the
	// TCP peer.
	ClientAddr func(*http.Request) string

	once    sync.Once
	senders *ratelimit.Keyed
	// stored holds the ids this intake stored lately: a repeat is
	// acknowledged without a store (WEBHOOKS would discard it anyway).
	stored *lru.Cache[string, struct{}]
}

// recentlyStored bounds the ids an intake remembers having stored.
const recentlyStored = 8192

// sender is the address the per-sender limit is kept for.
func (in *Intake) sender(r *http.Request) string {
	if in.ClientAddr != nil {
		return in.ClientAddr(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// maxWebhookBody bounds a webhook body: it only ever holds id, name and time.
const maxWebhookBody = 16 << 10

// ServeHTTP implements http.Handler.
func (in *Intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	in.once.Do(func() {
		if in.PerSecond <= 0 {
			in.PerSecond, in.Burst = 200, 400
		}
		in.senders = ratelimit.New(in.PerSecond, in.Burst)
		in.stored, _ = lru.New[string, struct{}](recentlyStored)
	})
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxWebhookBody)); err != nil {
		in.refuse(w, r, "body must be JSON {id, name, createdAt} of at most 16 KiB")
		return
	}
	// parseWebhook copies what it keeps: the buffer goes back to the pool.
	wh, msg := parseWebhook(buf.Bytes())
	if msg != "" {
		in.refuse(w, r, msg)
		return
	}
	if in.Unknown.Has(wh.ID) || in.stored.Contains(wh.ID) {
		// Acknowledged so that the sender stops, but not stored: the
		// upstream already said it does not know this event, or it is
		// stored already.
		in.Logger.DebugContext(r.Context(), "webhook for an event known to be unknown upstream or already stored; not stored", "event_id", wh.ID)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"received":true}`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := in.Queue.store(ctx, wh); err != nil {
		in.Logger.WarnContext(ctx, "webhook not stored; asking the sender to retry", "event_id", wh.ID, "err", err)
		w.Header().Set("Retry-After", "2")
		webhookError(w, http.StatusServiceUnavailable, "cannot store the webhook now; retry")
		return
	}
	in.stored.Add(wh.ID, struct{}{})
	in.Logger.DebugContext(ctx, "webhook received", "event_id", wh.ID, "name", wh.Name)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"received":true}`))
}

// refuse answers a delivery that is not a webhook: 400, or 429 with
// Retry-After once its sender is past the limit of refusals.
func (in *Intake) refuse(w http.ResponseWriter, r *http.Request, msg string) {
	if ok, _ := in.senders.Allow(in.sender(r)); !ok {
		w.Header().Set("Retry-After", "1")
		webhookError(w, http.StatusTooManyRequests, "too many malformed webhooks from this address; retry")
		return
	}
	webhookError(w, http.StatusBadRequest, msg)
}

// bodyBuffers hold webhook bodies while they are parsed: a body is about
// 100 bytes, and reading each into a fresh slice was most of the intake's
// own garbage.
var bodyBuffers = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 512)) }}

// webhookBody is what a webhook body holds.
type webhookBody struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"createdAt"`
	// The onboarding examples spell the time created_at.
	CreatedAtSnake string `json:"created_at"`
}

// parseWebhook reads a webhook body: only an id, a name and a creation time
// (createdAt, or the onboarding examples' created_at). It answers a message
// for the sender when the body is not one; the message quotes nothing of it.
func parseWebhook(raw []byte) (webhook, string) {
	var body webhookBody
	// The upstream clients' decoder and rules (roundtrip.Unmarshal): the
	// body is the payments upstream's JSON like its answers are.
	if err := roundtrip.Unmarshal(raw, &body); err != nil {
		return webhook{}, "body must be JSON {id, name, createdAt}"
	}
	if !events.IsToken(body.ID) || !events.IsToken(body.Name) {
		return webhook{}, "id and name must be 1-128 letters, digits, - or _"
	}
	if uuid.Validate(body.ID) != nil {
		// The spec's event ids are UUID strings: anything else is no
		// event of the upstream's, and is refused before any store or read.
		return webhook{}, "id must be an event id (a UUID)"
	}
	wh := webhook{Source: events.SourcePayments, ID: body.ID, Name: body.Name}
	for _, v := range []string{body.CreatedAt, body.CreatedAtSnake} {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v)); err == nil {
			wh.CreatedAt = t
			break
		}
	}
	return wh, ""
}

func webhookError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// appendJSON appends w as encoding/json would write it (the enricher reads
// it back with encoding/json; TestWebhookAppendJSONMatchesEncodingJSON).
// Source, ID and Name must be tokens (events.IsToken), which need no
// escaping; the time is RFC 3339 with nanoseconds, omitted when zero, as
// omitzero does.
func (w webhook) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"source":"`...)
	dst = append(dst, w.Source...)
	dst = append(dst, `","id":"`...)
	dst = append(dst, w.ID...)
	dst = append(dst, `","name":"`...)
	dst = append(dst, w.Name...)
	dst = append(dst, '"')
	if !w.CreatedAt.IsZero() {
		dst = append(dst, `,"created_at":"`...)
		dst = w.CreatedAt.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}
