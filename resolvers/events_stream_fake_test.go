package resolvers

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// streamFake is an EventStream that records what the resolvers ask of it
// (each subscription's, history page's and cursor's filter) and serves the
// events a test gives it: every subscription is offered, at once, the
// events its filter lets through.
type streamFake struct {
	mu sync.Mutex
	// live are offered to every subscription, in order.
	live []*events.Event
	// history answers History; nil is an empty page.
	history *events.History
	// err, when set, answers SubscribeSink, History and CursorFor.
	err error
	// byID answers Lookup.
	byID map[string]*events.Event

	// replay hands the events over as a resume's replay (Send) instead
	// of live (Offer).
	replay bool

	filters   []events.Filter
	sinks     []events.Sink
	afters    []string
	limits    []int
	published []events.Event
}

var _ EventStream = (*streamFake)(nil)

// useStream makes h's resolvers read events from a new streamFake.
func useStream(h *harness) *streamFake {
	s := &streamFake{byID: map[string]*events.Event{}}
	h.r.Events = s
	return s
}

// passes reports whether f lets e through, as the bus's fan-out decides.
func passes(f events.Filter, e *events.Event) bool {
	if len(f.Names) > 0 && !slices.Contains(f.Names, e.Name) {
		return false
	}
	return f.Match == nil || f.Match(e)
}

func (s *streamFake) SubscribeSink(ctx context.Context, f events.Filter, after string, sink events.Sink) error {
	s.mu.Lock()
	s.filters, s.afters = append(s.filters, f), append(s.afters, after)
	err, live, replay := s.err, slices.Clone(s.live), s.replay
	if err == nil {
		s.sinks = append(s.sinks, sink)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	for _, e := range live {
		if !passes(f, e) {
			continue
		}
		if replay {
			if err := sink.Send(ctx, e); err != nil {
				return err
			}
		} else if !sink.Offer(e) {
			sink.Close(events.ErrSlowSubscriber)
			return nil
		}
	}
	return nil
}

// lastSink is the sink of the last subscription.
func (s *streamFake) lastSink(t *testing.T) events.Sink {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sinks) == 0 {
		t.Fatal("nothing subscribed")
	}
	return s.sinks[len(s.sinks)-1]
}

func (s *streamFake) CursorFor(_ context.Context, f events.Filter) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters = append(s.filters, f)
	if s.err != nil {
		return "", s.err
	}
	return "cursor-head", nil
}

func (s *streamFake) History(_ context.Context, f events.Filter, before string, limit int) (*events.History, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters, s.afters, s.limits = append(s.filters, f), append(s.afters, before), append(s.limits, limit)
	if s.err != nil {
		return nil, s.err
	}
	if s.history == nil {
		return &events.History{Head: "cursor-head"}, nil
	}
	return s.history, nil
}

func (s *streamFake) Publish(_ context.Context, e events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.published = append(s.published, e)
	return nil
}

func (s *streamFake) Lookup(_ context.Context, cursor, source, id string) (*events.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e == nil || e.Cursor != cursor || source != events.SourceGateway || !events.BankingSide(e.Source) {
		return nil, nil
	}
	c := *e
	return &c, nil
}

// lastFilter is the filter of the stream's last read.
func (s *streamFake) lastFilter(t *testing.T) events.Filter {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.filters) == 0 {
		t.Fatal("the stream was not read")
	}
	return s.filters[len(s.filters)-1]
}

// reads is how often the stream was read (subscriptions, pages, cursors).
func (s *streamFake) reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.filters)
}

// pollFake is a BankPolling that records whom it was asked to watch.
type pollFake struct {
	mu                 sync.Mutex
	watched, baselines []string
}

func (p *pollFake) Watch(_ context.Context, corp string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watched = append(p.watched, corp)
}

func (p *pollFake) Baseline(_ context.Context, corp string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.baselines = append(p.baselines, corp)
}

func (p *pollFake) asked() (watched, baselines []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.watched), slices.Clone(p.baselines)
}

// paymentsEvent and bankingEvent are events as the bus holds them.
func paymentsEvent(id, name, payload string) *events.Event {
	return &events.Event{Source: events.SourcePayments, ID: id, Name: name, Payload: json.RawMessage(payload),
		CreatedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), Cursor: "c-" + id}
}

func bankingEvent(t *testing.T, source, id, name, corp, subject string) *events.Event {
	t.Helper()
	e, err := events.NewChange(source, id, name, corp, subject, map[string]any{}, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	e.Cursor = "c-" + id
	return &e
}
