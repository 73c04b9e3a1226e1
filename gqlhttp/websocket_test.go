package gqlhttp

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// keepAliveServer accepts one websocket with the adapter and reads it as
// gqlgen's read loop does, reporting how the reading ended.
func keepAliveServer(t *testing.T, g GorillaWebsocket) (url string, ended <-chan error) {
	t.Helper()
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := g.Accept(w, r, transport.WebsocketAcceptOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		for {
			if _, _, err := c.NextReader(); err != nil {
				done <- err
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), done
}

func dialKeepAlive(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	c, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A peer that answers is kept: it receives the protocol's ping messages and
// websocket ping frames, tick after tick, well past the peer timeout.
func TestKeepAliveKeepsAnAnsweringPeer(t *testing.T) {
	url, ended := keepAliveServer(t, GorillaWebsocket{KeepAlive: 25 * time.Millisecond, PeerTimeout: 500 * time.Millisecond})
	c := dialKeepAlive(t, url)
	var framePings atomic.Int32
	c.SetPingHandler(func(data string) error {
		framePings.Add(1)
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	pings := 0
	for pings < 60 { // about 3 peer timeouts
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d pings: %v", pings, err)
		}
		if string(msg) != `{"type":"ping"}` {
			t.Fatalf("keep-alive message %s, want a graphql-transport-ws ping", msg)
		}
		pings++
	}
	if framePings.Load() == 0 {
		t.Error("no websocket ping frame arrived")
	}
	select {
	case err := <-ended:
		t.Fatalf("the server dropped a peer that answered: %v", err)
	default:
	}
}

// A peer that answers nothing (it stopped reading, or vanished) is dropped
// once it has been silent for the peer timeout: the read loop fails.
func TestKeepAliveDropsASilentPeer(t *testing.T) {
	url, ended := keepAliveServer(t, GorillaWebsocket{KeepAlive: 20 * time.Millisecond, PeerTimeout: 100 * time.Millisecond})
	dialKeepAlive(t, url) // never reads, so never answers a ping
	select {
	case err := <-ended:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read loop ended with %v, want the read deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a silent peer was never dropped")
	}
}

// A protocol pong (graphql-transport-ws) counts as the peer being heard
// from: gqlgen clears the read deadline on one, which must not switch
// dead-peer detection off.
func TestProtocolPongMovesTheDeadlineInsteadOfClearingIt(t *testing.T) {
	g := GorillaWebsocket{KeepAlive: time.Hour, PeerTimeout: 100 * time.Millisecond}
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := g.Accept(w, r, transport.WebsocketAcceptOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, _, err = c.NextReader() // the client's pong
		if err != nil {
			done <- err
			return
		}
		_ = c.(transport.WebsocketReadDeadliner).SetReadDeadline(time.Time{}) // what gqlgen does on a pong
		_, _, err = c.NextReader()
		done <- err
	}))
	t.Cleanup(srv.Close)
	c := dialKeepAlive(t, "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"pong"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("after a pong, a silent peer: %v, want the read deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pong switched dead-peer detection off")
	}
}
