package resolvers

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// What live queries follow (LiveChanges) and how the gateway announces its
// own banking-side changes on the stream.

// A live query follows the subjects of the events its session's scope
// sees, subscribed as the events subscription is: a person only its
// corporation's (offered no other), watched for its banking changes. An
// event names its subject, or for a payments event its order; one naming
// neither changes nothing. The feed's end says why.
func TestLiveChangesFollowTheSessionsSubjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	poll := &pollFake{}
	h.r.BankPoll = poll
	stream.live = []*events.Event{
		bankingEvent(t, events.SourceGateway, "g-1", "PersonUpdated", demoCorp, relay.ID(relay.Person, demoPerson)),
		bankingEvent(t, events.SourceBanking, "b-1", "WalletChanged", otherCorp, relay.ID(relay.Wallet, otherCorp, "w")),
		bankingEvent(t, events.SourceBanking, "b-2", "Odd", demoCorp, ""),
		paymentsEvent("p-1", "OrderCaptured", `{"order_id":"ord-1"}`),
	}
	var (
		mu       sync.Mutex
		notified []string
		ended    []error
	)
	follow := func(ctx context.Context) error {
		return LiveChanges{h.r}.Follow(ctx,
			func(id string) { mu.Lock(); notified = append(notified, id); mu.Unlock() },
			func(err error) { mu.Lock(); ended = append(ended, err); mu.Unlock() })
	}
	h.as(person).inSession(func(ctx context.Context) {
		if err := follow(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if want := []string{relay.ID(relay.Person, demoPerson)}; !slices.Equal(notified, want) {
		t.Fatalf("a person followed %v, want %v", notified, want)
	}
	if f := stream.lastFilter(t); !slices.Equal(f.Corporations, []string{demoCorp}) {
		t.Fatalf("a person's feed is offered the events of %v, want its corporation's only", f.Corporations)
	}
	if watched, _ := poll.asked(); !slices.Equal(watched, []string{demoCorp}) {
		t.Fatalf("watched %v", watched)
	}
	sink := stream.lastSink(t)
	sink.Close(nil)
	if len(ended) != 0 {
		t.Fatalf("a feed its follower left ended with %v", ended)
	}
	sink.Close(events.ErrSlowSubscriber)
	sink.Close(events.ErrBusClosed)
	if len(ended) != 2 || gqlCode(ended[0]) != gqlerr.RateLimited || gqlCode(ended[1]) != gqlerr.UpstreamUnavailable {
		t.Fatalf("ended with %v, want RATE_LIMITED then UPSTREAM_UNAVAILABLE", ended)
	}

	notified = nil
	stream.replay = true
	h.as(staff).inSession(func(ctx context.Context) {
		if err := follow(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if want := []string{relay.ID(relay.Person, demoPerson), relay.ID(relay.Wallet, otherCorp, "w"), globalOrder("ord-1")}; !slices.Equal(notified, want) {
		t.Fatalf("staff followed %v, want %v", notified, want)
	}
	if f := stream.lastFilter(t); f.Corporations != nil {
		t.Fatalf("staff's feed is narrowed to %v", f.Corporations)
	}

	h.as(customer).inSession(func(ctx context.Context) {
		if code := gqlCode(follow(ctx)); code != gqlerr.Forbidden {
			t.Fatalf("a payments customer followed: %v", code)
		}
	})
	stream.err = events.ErrBadCursor
	h.as(person).inSession(func(ctx context.Context) {
		if code := gqlCode(follow(ctx)); code != gqlerr.BadUserInput {
			t.Fatalf("a refused subscription: %v", code)
		}
	})
}

// gqlCode is err's GraphQL code, "" when it has none.
func gqlCode(err error) gqlerr.Code {
	if e, ok := gqlerr.As(err); ok {
		return e.Code
	}
	return ""
}

// newPublishStream is a stream that says whether it took an announcement
// or already held one with its id, and since when (the bus's PublishNew).
type newPublishStream struct {
	*streamFake
	// held maps an event id the stream already holds to when it was
	// stored.
	held map[string]time.Time
	err  error
	ids  []string
}

func (s *newPublishStream) PublishNew(_ context.Context, e events.Event) (bool, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, e.ID)
	if s.err != nil {
		return false, time.Time{}, s.err
	}
	if at, ok := s.held[e.ID]; ok {
		return false, at, nil
	}
	s.published = append(s.published, e)
	return true, time.Time{}, nil
}

// A change is announced under the id every announcer of it derives, so
// the stream keeps one: a creation once, whoever announces it first. A
// later version the stream already held from before the mutation began is
// a change of its own, announced again under a fresh id; one held since
// it began is this very change, found by a poll: it stands alone.
func TestAnnounceChangeKeepsOneAnnouncementPerChange(t *testing.T) {
	t.Parallel()
	subject := relay.ID(relay.Person, demoPerson)
	id := events.ChangeID(subject, "v2")
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	announce := func(h *harness, stream EventStream, version string) {
		h.r.Events = stream
		h.as(person).inSession(func(ctx context.Context) {
			ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{Stats: graphql.Stats{OperationStart: start}})
			h.r.announceChange(ctx, "PersonBlocked", demoCorp, subject, version, map[string]any{"status": "blocked"})
		})
	}
	for _, tc := range []struct {
		name    string
		held    map[string]time.Time
		version string
		// ids are the ids PublishNew was asked with; "new" is a fresh id.
		ids       []string
		published int
	}{
		{"a new version", nil, "v2", []string{id}, 1},
		{"a version held from before", map[string]time.Time{id: start.Add(-time.Hour)}, "v2", []string{id, "new"}, 1},
		{"a version held since the mutation began", map[string]time.Time{id: start.Add(time.Millisecond)}, "v2", []string{id}, 0},
	} {
		h := newHarness(t)
		stream := &newPublishStream{streamFake: useStream(h), held: tc.held}
		announce(h, stream, tc.version)
		if len(stream.ids) != len(tc.ids) || stream.ids[0] != tc.ids[0] || (len(tc.ids) == 2 && stream.ids[1] == id) {
			t.Fatalf("%s: announced under %v, want %v", tc.name, stream.ids, tc.ids)
		}
		if len(stream.published) != tc.published {
			t.Fatalf("%s: %d announcements, want %d", tc.name, len(stream.published), tc.published)
		}
		if tc.published > 0 {
			e := stream.published[0]
			if e.Source != events.SourceGateway || e.PayloadString("by_kind") != string(person.kind) || e.PayloadString(events.PayloadCorporation) != demoCorp ||
				e.PayloadString(events.PayloadSubject) != subject || e.PayloadString("status") != "blocked" {
				t.Fatalf("%s: announced %s", tc.name, e.Payload)
			}
		}
	}

	// A creation is announced once under its change id, whatever the
	// stream held; a stream that cannot tell is published to plainly.
	h := newHarness(t)
	stream := &newPublishStream{streamFake: useStream(h)}
	announce(h, stream, events.Created)
	if len(stream.ids) != 0 || len(stream.published) != 1 || stream.published[0].ID != events.ChangeID(subject, events.Created) {
		t.Fatalf("a creation: asked %v, published %v", stream.ids, stream.published)
	}
	h = newHarness(t)
	plain := useStream(h)
	announce(h, plain, "v2")
	if len(plain.published) != 1 || plain.published[0].ID != id {
		t.Fatalf("a plain stream got %v", plain.published)
	}

	// An announcement that fails is logged: the upstream has acted.
	h = newHarness(t)
	failing := &newPublishStream{streamFake: useStream(h), err: errors.New("stream down")}
	announce(h, failing, "v2")
	if !h.logged("could not publish a gateway event") {
		t.Fatal("a failed announcement was not logged")
	}
	h = newHarness(t)
	h.r.Events = useStream(h)
	h.as(person).inSession(func(ctx context.Context) {
		h.r.announceChange(ctx, "Odd", demoCorp, subject, "v3", map[string]any{"bad": make(chan int)})
	})
	if !h.logged("could not publish a gateway event") {
		t.Fatal("an announcement that could not be made was not logged")
	}
}

// New wallets are announced under the id a poll gives the creation of the
// one real wallet among them; several (or none) have no such single id.
func TestWalletCreatedIDIsThePollsForOneRealWallet(t *testing.T) {
	t.Parallel()
	real := func(id string) *banking.Wallet { return &banking.Wallet{ID: id, Type: banking.WalletTypeReal} }
	other := &banking.Wallet{ID: "w-pending", Type: "pending"}
	want := events.ChangeID(relay.ID(relay.Wallet, demoCorp, "w-1"), events.Created)
	if got := walletCreatedID(demoCorp, []*banking.Wallet{other, real("w-1")}); got != want {
		t.Fatalf("one real wallet: %s, want the poll's %s", got, want)
	}
	for _, list := range [][]*banking.Wallet{{real("w-1"), real("w-2")}, {other}} {
		a, b := walletCreatedID(demoCorp, list), walletCreatedID(demoCorp, list)
		if a == want || a == b {
			t.Fatalf("%d wallets: ids %s and %s, want fresh ones", len(list), a, b)
		}
	}
}

// A gateway event that cannot be published is logged, not returned.
func TestPublishGatewayEventLogsAFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	stream := useStream(h)
	h.as(staff).inSession(func(ctx context.Context) {
		h.r.publishGatewayEvent(ctx, "CardIssued", demoCorp, relay.ID(relay.Card, "c"), map[string]any{})
	})
	if len(stream.published) != 1 || stream.published[0].PayloadString("by_kind") != string(staff.kind) {
		t.Fatalf("published %v", stream.published)
	}
	h.r.Events = failingPublisher{stream}
	h.inSession(func(ctx context.Context) {
		h.r.publishGatewayEvent(ctx, "CardIssued", demoCorp, "", map[string]any{})
	})
	if !h.logged("could not publish a gateway event") {
		t.Fatal("a failed publication was not logged")
	}
}

type failingPublisher struct{ *streamFake }

func (failingPublisher) Publish(context.Context, events.Event) error {
	return errors.New("stream down")
}

// A live event's value goes to the subscriber's channel, through a
// backlog when the channel is full, in order; a subscriber that leaves
// stops the replay; the end of the stream closes the channel after what
// it had.
func TestLiveSinkDeliversInOrderAndEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t)
	sink := &liveSink{ctx: ctx, out: make(chan *model.LiveEvent, 1), r: h.r}
	for _, id := range []string{"e-1", "e-2", "e-3"} {
		if !sink.Offer(paymentsEvent(id, "OrderCreated", `{}`)) {
			t.Fatalf("%s was refused", id)
		}
	}
	sink.Close(nil)
	var got []string
	for ev := range sink.out {
		got = append(got, ev.Event.ID)
	}
	if !slices.Equal(got, []string{"e-1", "e-2", "e-3"}) {
		t.Fatalf("delivered %v", got)
	}

	left, leave := context.WithCancel(context.Background())
	sink = &liveSink{ctx: left, out: make(chan *model.LiveEvent), r: h.r}
	leave()
	if err := sink.Send(left, paymentsEvent("e-1", "OrderCreated", `{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a replay to a subscriber that left: %v", err)
	}
	if err := sink.Send(left, paymentsEvent("e-bad", "Broken", `[`)); err != nil {
		t.Fatalf("an undecodable replayed event: %v, want it skipped", err)
	}
}
