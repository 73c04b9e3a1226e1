package paymentsfeed_test

import (
	"context"
	"testing"

	"github.com/fingraph/fingraph/engine"
	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/paymentsfeed"
)

// openFeed starts an embedded JetStream with the event bus and the
// webhook queue on it, closed when the test ends.
func openFeed(ctx context.Context, t testing.TB) (*engine.Engine, *events.Bus, *paymentsfeed.Queue) {
	t.Helper()
	e, err := engine.Open(ctx, engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	bus, err := events.NewBus(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	q, err := paymentsfeed.NewQueue(ctx, e.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	return e, bus, q
}
