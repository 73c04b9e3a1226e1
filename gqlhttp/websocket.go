package gqlhttp

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// GorillaWebsocket adapts gorilla/websocket to gqlgen's websocket transport.
// It implements the optional read-limit and read-deadline interfaces too:
// without them gqlgen silently skips payload limits and pong timeouts.
type GorillaWebsocket struct {
	Upgrader websocket.Upgrader
}

var _ transport.WebsocketImplementation = GorillaWebsocket{}

// Accept upgrades the request, negotiating gqlgen's subprotocols.
func (g GorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := g.Upgrader
	up.Subprotocols = append(append([]string(nil), up.Subprotocols...), opts.Subprotocols...)
	conn, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return &gorillaConn{conn: conn}, nil
}

type gorillaConn struct{ conn *websocket.Conn }

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (c *gorillaConn) Close() error { return c.conn.Close() }

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.conn.NextReader()
	if err != nil {
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived, websocket.CloseGoingAway) {
			return 0, nil, transport.ErrWebsocketClosed
		}
		return 0, nil, err
	}
	return t, r, nil
}

func (c *gorillaConn) WriteJSON(v any) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	err := c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, message), time.Now().Add(time.Second))
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

func (c *gorillaConn) Subprotocol() string               { return c.conn.Subprotocol() }
func (c *gorillaConn) SetReadLimit(limit int64)          { c.conn.SetReadLimit(limit) }
func (c *gorillaConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }
