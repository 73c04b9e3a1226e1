package resolvers

import (
	"context"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

// eventHistory is Query.eventHistory: the bus's history, newest first,
// filtered as the events subscription is for this session.
func (r *Resolver) eventHistory(ctx context.Context, first *int64, after *string, names []string) (*model.EventConnection, error) {
	limit, err := pageSize(first)
	if err != nil {
		return nil, err
	}
	if len(names) > maxNames {
		return nil, gqlerr.BadInput("names", "at most %d names", maxNames)
	}
	sc, err := r.eventScope(ctx)
	if err != nil {
		return nil, err
	}
	if deref(after) == "" {
		// The newest page's startCursor is a point to follow from, as
		// eventsCursor is.
		r.bankBaseline(ctx)
	}
	f := events.Filter{Names: names, Match: sc.match(nil), Scope: sc.busScope()}
	h, err := r.Events.History(ctx, f, deref(after), limit)
	if err != nil {
		return nil, streamArgError(err)
	}
	edges := make([]*model.EventEdge, 0, len(h.Events))
	for _, e := range h.Events {
		ev, err := toLiveEvent(e)
		if err != nil {
			r.Logger.WarnContext(ctx, "undecodable event on the bus", "event_id", e.ID, "err", err)
			continue
		}
		edges = append(edges, &model.EventEdge{Cursor: ev.Cursor, Source: ev.Source, Node: ev.Event})
	}
	info := &model.PageInfo{HasNextPage: h.More, HasPreviousPage: deref(after) != ""}
	switch {
	case len(edges) > 0:
		info.StartCursor, info.EndCursor = &edges[0].Cursor, &edges[len(edges)-1].Cursor
	case deref(after) == "":
		// The newest page is empty: subscribing after the stream's
		// position then misses nothing.
		info.StartCursor = &h.Head
	}
	if h.More {
		info.EndCursor = &h.Next
	}
	return &model.EventConnection{Edges: edges, PageInfo: info}, nil
}

// gatewayEvent reads back a banking-side event (made by the gateway or
// found by polling) from the event stream, when the session may see it, as
// the events subscription would show it; nil otherwise.
func (r *Resolver) gatewayEvent(ctx context.Context, cursor, id string) (*model.Event, error) {
	e, err := r.Events.Lookup(ctx, cursor, events.SourceGateway, id)
	if err != nil || e == nil {
		return nil, err
	}
	if ok, err := r.maySeeEvent(ctx, e); !ok || err != nil {
		return nil, err
	}
	ev, err := toLiveEvent(e)
	if err != nil {
		return nil, err
	}
	return ev.Event, nil
}
