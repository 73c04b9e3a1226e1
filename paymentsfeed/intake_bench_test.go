package paymentsfeed_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fingraph/fingraph/paymentsfeed"
)

// BenchmarkIntake measures the webhook intake alone: a webhook handed to
// the handler (no sockets, no middleware) until its 202, which comes after
// JetStream stored it. "unique" stores every webhook; "repeated" posts ids
// already stored, which JetStream deduplicates. The sender limit is raised
// out of the way. The enricher does not run, so what is measured is the
// intake's own cost and the store's acknowledgement.
//
//	go test -run '^$' -bench Intake -benchtime 20000x ./paymentsfeed
func BenchmarkIntake(b *testing.B) {
	ctx := context.Background()
	_, _, q := openFeed(ctx, b)
	in := &paymentsfeed.Intake{Queue: q, Logger: slog.New(slog.DiscardHandler), PerSecond: 1e9, Burst: 1e9}
	var seq atomic.Int64
	post := func(b *testing.B, id int64) {
		body := fmt.Sprintf(`{"id":"00000000-0000-4000-8000-%012d","name":"OrderCreated","createdAt":"2026-11-23T12:00:00Z"}`, id)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/payments", strings.NewReader(body))
		req.RemoteAddr = "192.0.2.1:4000"
		w := httptest.NewRecorder()
		in.ServeHTTP(w, req)
		if w.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
	}
	b.Run("unique", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				post(b, seq.Add(1))
			}
		})
	})
	stored := seq.Load()
	b.Run("repeated", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		var i atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				post(b, 1+i.Add(1)%stored)
			}
		})
	})
}
