package events_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fingraph/fingraph/events"
)

// TestBankingChangesShareTheGatewaysIDsAndFlowLikeThem: a change announced
// by a mutation (source gateway) and found again by polling (source
// banking) under one ChangeID is stored once; a banking event travels
// through history, subscriptions with a cursor and Lookup like a gateway
// event, and a payments-source lookup of its id finds nothing.
func TestBankingChangesShareTheGatewaysIDsAndFlowLikeThem(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, bus := openBus(ctx, t)
	start, err := bus.Cursor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	subject := "V2FsbGV0OmMtMS93LTE"
	same := events.ChangeID(subject, "v1")
	payload := json.RawMessage(`{"corporation_id":"c-1","subject":"` + subject + `"}`)
	for _, src := range []string{events.SourceGateway, events.SourceBanking} {
		if err := bus.Publish(ctx, events.Event{Source: src, ID: same, Name: "WalletBalanceChanged", Payload: payload, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	next := events.ChangeID(subject, "v2")
	if err := bus.Publish(ctx, events.Event{Source: events.SourceBanking, ID: next, Name: "WalletBalanceChanged", Payload: payload, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}

	h, err := bus.History(ctx, events.Filter{Names: []string{"WalletBalanceChanged"}}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 2 || h.Events[0].ID != next || h.Events[0].Source != events.SourceBanking ||
		h.Events[1].ID != same || h.Events[1].Source != events.SourceGateway {
		t.Fatalf("history: want the banking change over the one gateway announcement, got %d events", len(h.Events))
	}
	if h.Events[0].PayloadString(events.PayloadCorporation) != "c-1" {
		t.Fatal("the banking event's corporation is not readable for scoping")
	}

	sub, err := bus.Subscribe(ctx, events.Filter{Match: func(e *events.Event) bool { return events.BankingSide(e.Source) }}, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := receiveInOrderIDs(ctx, sub, same, next); err != nil {
		t.Fatalf("subscription: %v", err)
	}

	banking := h.Events[0]
	if e, err := bus.Lookup(ctx, banking.Cursor, events.SourceBanking, next); err != nil || e == nil || e.Source != events.SourceBanking {
		t.Fatalf("lookup as banking: %v %v", e, err)
	}
	if e, err := bus.Lookup(ctx, banking.Cursor, events.SourceGateway, next); err != nil || e == nil {
		t.Fatalf("lookup by a gateway event id: %v %v", e, err)
	}
	if e, err := bus.Lookup(ctx, banking.Cursor, events.SourcePayments, next); err != nil || e != nil {
		t.Fatalf("a payments lookup found a banking event: %v %v", e, err)
	}
}
