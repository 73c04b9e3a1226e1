package events

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fingraph/fingraph/ratelimit"
)

// Intake receives the payments upstream's webhooks. It stores each on the
// bus and only then answers 2xx; when the bus cannot take it, it answers
// 503 so that the sender slows down and retries.
//
// A sender is rate limited (PerSecond, Burst; 429 with Retry-After past
// them), and a repeat of an id the upstream did not know (Unknown) is
// acknowledged without being stored.
type Intake struct {
	Bus    *Bus
	Logger *slog.Logger
	// Unknown, when set, holds the ids the upstream answered 404 for.
	Unknown *Unknown
	// PerSecond and Burst bound one sending address (defaults 200 and 400:
	// the upstream sends one webhook per event, retried at 1-16 s).
	PerSecond float64
	Burst     int

	once    sync.Once
	senders *ratelimit.Keyed
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
	})
	sender, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		sender = r.RemoteAddr
	}
	if ok, _ := in.senders.Allow(sender); !ok {
		w.Header().Set("Retry-After", "1")
		webhookError(w, http.StatusTooManyRequests, "too many webhooks from this address; retry")
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
	if err != nil {
		webhookError(w, http.StatusBadRequest, "body must be JSON {id, name, createdAt} of at most 16 KiB")
		return
	}
	wh, msg := parseWebhook(raw)
	if msg != "" {
		webhookError(w, http.StatusBadRequest, msg)
		return
	}
	if in.Unknown.Has(wh.ID) {
		// Acknowledged so that the sender stops, but not stored: the
		// upstream already said it does not know this event.
		in.Logger.DebugContext(r.Context(), "webhook for an event known to be unknown upstream; not stored", "event_id", wh.ID)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"received":true}`))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := in.Bus.publishWebhook(ctx, wh); err != nil {
		in.Logger.WarnContext(ctx, "webhook not stored; asking the sender to retry", "event_id", wh.ID, "err", err)
		w.Header().Set("Retry-After", "2")
		webhookError(w, http.StatusServiceUnavailable, "cannot store the webhook now; retry")
		return
	}
	in.Logger.DebugContext(ctx, "webhook received", "event_id", wh.ID, "name", wh.Name)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"received":true}`))
}

// parseWebhook reads a webhook body: only an id, a name and a creation time
// (createdAt, or the onboarding examples' created_at). It answers a message
// for the sender when the body is not one; the message quotes nothing of it.
func parseWebhook(raw []byte) (webhook, string) {
	var body struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		CreatedAt string `json:"createdAt"`
		// The onboarding examples spell the time created_at.
		CreatedAtSnake string `json:"created_at"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return webhook{}, "body must be JSON {id, name, createdAt}"
	}
	if !tokenRe.MatchString(body.ID) || !tokenRe.MatchString(body.Name) {
		return webhook{}, "id and name must be 1-128 letters, digits, - or _"
	}
	wh := webhook{Source: SourcePayments, ID: body.ID, Name: body.Name}
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
