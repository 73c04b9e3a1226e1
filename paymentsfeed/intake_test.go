package paymentsfeed_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/paymentsfeed"
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
	q, err := paymentsfeed.NewQueue(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&paymentsfeed.Intake{Queue: q, Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close()
	post := func(id string) *http.Response {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"id":"`+id+`","name":"IndividualActivated","createdAt":"2026-01-01T00:00:00Z"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c11"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("stored webhook: want 202, got %d", resp.StatusCode)
	}
	e.Close()
	resp := post("6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c12")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("bus down: want 503 with Retry-After, got %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// One sending address past its allowance of refused deliveries gets 429
// with Retry-After; another address is not affected, and a well-formed
// webhook from the limited address is still stored. The rate is near zero
// here, so that the count does not depend on how fast the test runs.
func TestIntakeLimitsEachSendersRefusals(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	q, err := paymentsfeed.NewQueue(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	in := &paymentsfeed.Intake{Queue: q, Logger: slog.New(slog.DiscardHandler), PerSecond: 0.001, Burst: 5}
	post := func(addr, id string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/webhooks/payments",
			strings.NewReader(`{"id":"`+id+`","name":"IndividualActivated"}`))
		r.RemoteAddr = addr + ":4000"
		w := httptest.NewRecorder()
		in.ServeHTTP(w, r)
		return w
	}
	for i := range 5 {
		if w := post("192.0.2.1", "e-"+strconv.Itoa(i)); w.Code != http.StatusBadRequest {
			t.Fatalf("malformed webhook %d within the burst: %d", i, w.Code)
		}
	}
	w := post("192.0.2.1", "e-5")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("past the burst: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := post("192.0.2.2", "e-0"); w.Code != http.StatusBadRequest {
		t.Errorf("another sender: %d", w.Code)
	}
	if w := post("192.0.2.1", "6f0c1d52-8a5e-4c1b-9a43-2f7d0e6b9c12"); w.Code != http.StatusAccepted {
		t.Errorf("a well-formed webhook from the limited sender: %d", w.Code)
	}
}
