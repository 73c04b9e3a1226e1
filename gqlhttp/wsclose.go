package gqlhttp

import "github.com/gorilla/websocket"

// Close codes of graphql-transport-ws that the gateway's own code sends
// (the init function through RefuseInit, CloseSocket when a session ends):
// both websocket transports close with them.
const (
	// CloseUnauthorized ends a connection whose session ended.
	CloseUnauthorized = 4401
	// CloseForbidden refuses a connection_init with an unknown session.
	CloseForbidden = 4403
	// CloseTooMany refuses a connection over a cap (graphql-ws does not
	// retry it).
	CloseTooMany = 4429
)

// CloseUpgrading is the close code of a shutdown: 1012 Service Restart,
// after which graphql-ws clients reconnect.
const CloseUpgrading = 1012

// Close codes of graphql-transport-ws that TransportWS sends on its own,
// for what a client sent or failed to send.
const (
	closeBadMessage  = 4400
	closeInitTimeout = 4408
	closeDuplicateID = 4409
)

// wsVerdict is what handling a message decided: a close code and reason,
// or 0 to read on.
type wsVerdict struct {
	code   int
	reason string
}

// The closes TransportWS decides, with their reasons: graphql-ws's
// reference server's where it gives one, a precision after a colon where
// the code alone says little.
var (
	closeInvalidMessage = wsVerdict{closeBadMessage, "Invalid message received"}
	closeNoID           = wsVerdict{closeBadMessage, "Invalid message received: subscribe without an id"}
	closeUnknownType    = wsVerdict{closeBadMessage, "Invalid message received: unknown type"}
	closeBadInitPayload = wsVerdict{closeBadMessage, "Invalid message received: connection_init payload is not an object"}
	closeUnacknowledged = wsVerdict{CloseUnauthorized, "Unauthorized"}
	closeIDInUse        = wsVerdict{closeDuplicateID, "Subscriber for the id already exists"}
	closeTooManyInits   = wsVerdict{CloseTooMany, "Too many initialisation requests"}
	closeInitRefused    = wsVerdict{CloseForbidden, "Forbidden"}
	closeInitExpired    = wsVerdict{closeInitTimeout, "Connection initialisation timeout"}
	closeInternal       = wsVerdict{websocket.CloseInternalServerErr, "Internal error"}
	closeAckUnencodable = wsVerdict{closeBadMessage, "Internal error"}
)

// end closes the connection (with code, when not 0), ends its operations
// and runs CloseFunc.
func (c *wsConn) end(code int, reason string) {
	if code != 0 {
		_ = c.gc.WriteClose(code, reason)
	}
	_ = c.gc.Close()
	if c.initTimer != nil {
		c.initTimer.Stop()
	}
	c.mu.Lock()
	c.closed = true
	ops := c.ops
	c.ops = nil
	c.mu.Unlock()
	for _, op := range ops {
		op.stop()
	}
	if c.closeFunc != nil {
		c.closeFunc(c.ctx, code)
	}
}
