package events_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// One sending address past its allowance gets 429 with Retry-After (the
// upstream's sender retries); another address is not affected. The rate is
// near zero here, so that the count does not depend on how fast the test
// runs.
func TestIntakeLimitsEachSender(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	in := &events.Intake{Bus: bus, Logger: slog.New(slog.DiscardHandler), PerSecond: 0.001, Burst: 5}
	post := func(addr string, i int) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/webhooks/payments",
			strings.NewReader(`{"id":"e-`+strings.ReplaceAll(addr, ".", "-")+`-`+strconv.Itoa(i)+`","name":"IndividualActivated"}`))
		r.RemoteAddr = addr + ":4000"
		w := httptest.NewRecorder()
		in.ServeHTTP(w, r)
		return w
	}
	for i := range 5 {
		if w := post("192.0.2.1", i); w.Code != http.StatusAccepted {
			t.Fatalf("webhook %d within the burst: %d", i, w.Code)
		}
	}
	w := post("192.0.2.1", 5)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("past the burst: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := post("192.0.2.2", 0); w.Code != http.StatusAccepted {
		t.Errorf("another sender: %d", w.Code)
	}
}
