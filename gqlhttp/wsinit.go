package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// connection_init and its authentication, for TransportWS: the init function
// (TransportWS.InitFunc) admits the connection or refuses it with the code
// RefuseInit chose; no connection_init within InitTimeout closes it.

type initRefusalKey struct{}

// RefuseInit returns ctx telling both websocket transports how to close a
// connection whose connection_init the init function refuses: with code and
// reason (at most 123 bytes).
func RefuseInit(ctx context.Context, code int, reason string) context.Context {
	ctx = transport.WithWebsocketCloseCode(ctx, code)
	ctx = transport.AppendCloseReason(ctx, reason)
	return context.WithValue(ctx, initRefusalKey{}, wsVerdict{code: code, reason: reason})
}

// initialise answers connection_init; a verdict with a code closes the
// connection.
func (c *wsConn) initialise(payload json.RawMessage) wsVerdict {
	if c.acked || !c.init.CompareAndSwap(0, 1) {
		if c.init.Load() == 2 {
			return wsVerdict{} // the init timeout closed the connection
		}
		return closeTooManyInits
	}
	if c.initTimer != nil {
		c.initTimer.Stop()
		c.initTimer = nil
	}
	var p transport.InitPayload
	if len(payload) > 0 && !bytes.Equal(payload, []byte("null")) {
		if err := json.Unmarshal(payload, &p); err != nil {
			return closeBadInitPayload
		}
	}
	var ack *transport.InitPayload
	if c.initFunc != nil {
		ctx, a, err := c.initFunc(c.ctx, p)
		if err != nil {
			if ctx != nil {
				if r, ok := ctx.Value(initRefusalKey{}).(wsVerdict); ok {
					return r
				}
			}
			return closeInitRefused
		}
		c.ctx, ack = ctx, a
	}
	msg := []byte(`{"type":"connection_ack"}`)
	if ack != nil {
		b, err := json.Marshal(*ack)
		if err != nil {
			return closeAckUnencodable
		}
		msg = append(append([]byte(`{"type":"connection_ack","payload":`), b...), '}')
	}
	c.acked = true
	c.send(msg)
	return wsVerdict{}
}

// initExpired runs on the init timer: no connection_init in time.
func (c *wsConn) initExpired() {
	if c.init.CompareAndSwap(0, 2) {
		_ = c.gc.WriteClose(closeInitExpired.code, closeInitExpired.reason)
		_ = c.gc.Close()
	}
}
