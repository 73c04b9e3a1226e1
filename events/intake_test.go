package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
)

// TestIntakeAsksForARetryWhenTheBusCannotStore checks the back-pressure
// contract: a webhook is acknowledged only once it is stored, and a 503
// tells the sender to slow down and resend.
func TestIntakeAsksForARetryWhenTheBusCannotStore(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&events.Intake{Bus: bus, Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close()
	post := func() *http.Response {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"id":"e-1","name":"IndividualActivated","createdAt":"2026-01-01T00:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post(); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("stored webhook: want 202, got %d", resp.StatusCode)
	}
	e.Close()
	resp := post()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("bus down: want 503 with Retry-After, got %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
