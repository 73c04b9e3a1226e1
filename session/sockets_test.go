package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fingraph/fingraph/session"
)

// A websocket tracked under its session ends when the session is deleted
// (the bucket watch sees it), when it expires, and never after it was
// untracked; an operation on a socket whose session ended is refused.
func TestSocketsEndWithTheirSession(t *testing.T) {
	store, _ := openStore(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sockets := session.NewSockets(nil)
	if err := sockets.Run(ctx, store); err != nil {
		t.Fatal(err)
	}
	h := session.NewHandler(store, nil)
	h.Sockets = sockets

	tok, err := store.Create(ctx, &session.Session{Kind: session.APIClient, CorporationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	connCtx, err := h.WebsocketInit(ctx, map[string]any{"sessionToken": tok})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 2)
	if _, err := h.TrackSocket(connCtx, func(error) { ended <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	untracked := make(chan struct{}, 1)
	untrack, err := h.TrackSocket(connCtx, func(error) { untracked <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	untrack()
	if n := sockets.Count(); n != 1 {
		t.Fatalf("tracked %d connections, want 1", n)
	}
	if err := h.Recheck(connCtx); err != nil {
		t.Fatalf("a live session failed its recheck: %v", err)
	}

	if err := store.Delete(ctx, tok); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second): // bounds a hung test only
		t.Fatal("deleting the session did not end its socket")
	}
	select {
	case <-untracked:
		t.Error("an untracked socket was ended")
	default:
	}
	if !errors.Is(h.Recheck(connCtx), session.ErrEnded) {
		t.Error("an operation on an ended session's socket passed the recheck")
	}
	if n := sockets.Count(); n != 0 {
		t.Errorf("%d connections still tracked", n)
	}
}

func TestSocketsEndAtExpiry(t *testing.T) {
	store, _ := openStore(t, 300*time.Millisecond)
	ctx := context.Background()
	h := session.NewHandler(store, nil)
	h.Sockets = session.NewSockets(nil)
	tok, err := store.Create(ctx, &session.Session{Kind: session.APIClient})
	if err != nil {
		t.Fatal(err)
	}
	connCtx, err := h.WebsocketInit(ctx, map[string]any{"sessionToken": tok})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 1)
	if _, err := h.TrackSocket(connCtx, func(error) { ended <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second): // bounds a hung test only
		t.Fatal("the session expired but its socket stayed open")
	}
	if h.Sockets.Count() != 0 {
		t.Error("an expired session's socket is still tracked")
	}
}

func TestSocketsPerSessionAreCapped(t *testing.T) {
	store, _ := openStore(t, time.Hour)
	ctx := context.Background()
	h := session.NewHandler(store, nil)
	h.Sockets = session.NewSockets(nil)
	h.Sockets.MaxPerSession = 2
	tok, _ := store.Create(ctx, &session.Session{Kind: session.APIClient})
	connCtx, _ := h.WebsocketInit(ctx, map[string]any{"sessionToken": tok})
	var untracks []func()
	for range 2 {
		u, err := h.TrackSocket(connCtx, func(error) {})
		if err != nil {
			t.Fatal(err)
		}
		untracks = append(untracks, u)
	}
	if _, err := h.TrackSocket(connCtx, func(error) {}); !errors.Is(err, session.ErrTooManySockets) {
		t.Fatalf("a third connection: %v", err)
	}
	untracks[0]()
	if _, err := h.TrackSocket(connCtx, func(error) {}); err != nil {
		t.Fatalf("a connection after one closed: %v", err)
	}
}
