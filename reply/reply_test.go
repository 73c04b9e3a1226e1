package reply_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/fingraph/fingraph/reply"
)

func TestMarkNoStoreSetsTheTransportsMarkAndIsHarmlessWithout(t *testing.T) {
	reply.MarkNoStore(t.Context()) // no transport: nothing to mark, no panic
	mark := new(atomic.Bool)
	ctx := reply.WithNoStore(t.Context(), mark)
	if mark.Load() {
		t.Fatal("marked before any resolver asked")
	}
	reply.MarkNoStore(ctx)
	if !mark.Load() {
		t.Fatal("MarkNoStore did not reach the transport's mark")
	}
}

// claimer lets one claim through, as a transport does.
type claimer struct {
	claimed bool
	signals []string
}

func (c *claimer) ClaimStream(context.Context) reply.Signal {
	if c.claimed {
		return nil
	}
	c.claimed = true
	return c
}
func (c *claimer) Sent()    { c.signals = append(c.signals, "sent") }
func (c *claimer) Closed()  { c.signals = append(c.signals, "closed") }
func (c *claimer) Unclaim() { c.signals = append(c.signals, "unclaim") }

func TestClaimStreamReachesTheTransportOnceAndIsANoOpWithout(t *testing.T) {
	none := reply.ClaimStream(t.Context())
	if none.Claimed() {
		t.Fatal("claimed a stream with no transport to claim")
	}
	none.Sent() // signals without a claim do nothing
	none.Closed()
	none.Unclaim()

	c := &claimer{}
	ctx := context.WithValue(t.Context(), reply.StreamKey{}, reply.Claimer(c))
	s := reply.ClaimStream(ctx)
	if !s.Claimed() {
		t.Fatal("the transport's claim was not taken")
	}
	if again := reply.ClaimStream(ctx); again.Claimed() {
		t.Fatal("one operation was claimed twice")
	}
	s.Sent()
	s.Sent()
	s.Closed()
	if got := len(c.signals); got != 3 || c.signals[0] != "sent" || c.signals[2] != "closed" {
		t.Fatalf("the transport got %v, want sent, sent, closed", c.signals)
	}
}
