package gqlhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
)

// Admission of long-lived connections (websockets, server-sent events,
// multipart subscriptions) and of the operations on a websocket: every
// place is taken before the work it buys is started, and a refusal costs a
// small, bounded amount and closes what it refuses.
//
// A client address has three budgets of long-lived places:
//
//   - signed-in places (Limits.MaxSocketsPerAddress), for connections whose
//     request or connection_init carries a signed-in session;
//   - anonymous places (Limits.MaxAnonymousPerAddress), smaller, for the
//     others: an anonymous connection never takes a signed-in place, so a
//     crowd of anonymous sockets behind one address (an office's NAT)
//     cannot shut its signed-in people out;
//   - pending places (MaxPendingSocketsPerAddress), for websockets upgraded
//     without a session while the anonymous places are all held: a client
//     that signs in with connection_init (its token in the payload, as
//     graphql-ws clients do) needs the upgrade first. A pending socket
//     becomes signed-in at connection_init or is closed with 4429 there;
//     the init timeout bounds how long it waits.

// MaxPendingSocketsPerAddress bounds the websockets of one address waiting
// for their connection_init to tell whether they are signed in, once the
// address's anonymous places are all held: room for a burst of signed-in
// clients reconnecting at once behind one address. Each waits the init
// timeout (3 s) at most; a client that presents its session at the upgrade
// (cookie, Authorization) needs none.
const MaxPendingSocketsPerAddress = 64

// placeClass is the budget a long-lived connection counts against.
type placeClass uint8

const (
	placeSignedIn placeClass = iota
	placeAnonymous
	placePending
)

// places counts the long-lived connections of every client address, by
// budget.
type places struct {
	max [3]int // by placeClass; 0 is no bound

	mu     sync.Mutex
	counts map[string]*[3]int
}

// anonymousBudget is the anonymous places of an address: the limit, or the
// default when unset, and never more than the signed-in places.
func anonymousBudget(l Limits) int {
	n := l.MaxAnonymousPerAddress
	if n <= 0 {
		n = DefaultLimits.MaxAnonymousPerAddress
	}
	if l.MaxSocketsPerAddress > 0 {
		n = min(n, l.MaxSocketsPerAddress)
	}
	return n
}

func newPlaces(signedIn, anonymous int) *places {
	return &places{max: [3]int{signedIn, anonymous, MaxPendingSocketsPerAddress}, counts: map[string]*[3]int{}}
}

// take takes a place of class for addr, or reports false when its budget
// is spent.
func (p *places) take(addr string, class placeClass) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(addr, class)
}

func (p *places) takeLocked(addr string, class placeClass) bool {
	c := p.counts[addr]
	if c == nil {
		c = &[3]int{}
		p.counts[addr] = c
	}
	if p.max[class] > 0 && c[class] >= p.max[class] {
		if *c == ([3]int{}) {
			delete(p.counts, addr)
		}
		return false
	}
	c[class]++
	return true
}

// give gives back a place take took.
func (p *places) give(addr string, class placeClass) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.giveLocked(addr, class)
}

func (p *places) giveLocked(addr string, class placeClass) {
	c := p.counts[addr]
	if c == nil {
		return
	}
	if c[class] > 0 {
		c[class]--
	}
	if *c == ([3]int{}) {
		delete(p.counts, addr)
	}
}

// move trades a place of class from for one of class to, or reports false
// (keeping from) when the budget of to is spent.
func (p *places) move(addr string, from, to placeClass) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.takeLocked(addr, to) {
		return false
	}
	p.giveLocked(addr, from)
	return true
}

// socketPlace is the place a websocket holds; it can change at
// connection_init (see Handler.initPlace).
type socketPlace struct {
	addr  string
	class placeClass
}

// classOf is the budget of a request: signed-in when the session layer
// says so (or when it is not asked: one budget for all), else anonymous.
func (h *Handler) classOf(ctx context.Context) placeClass {
	if h.signedIn == nil || h.signedIn(ctx) {
		return placeSignedIn
	}
	return placeAnonymous
}

// admitSocket takes the place of a websocket upgrade: signed-in or
// anonymous, or, with the anonymous places held, a pending one.
func (h *Handler) admitSocket(w http.ResponseWriter, r *http.Request, slot *socketSlot, addr string) bool {
	class := h.classOf(r.Context())
	ok := h.places.take(addr, class)
	if !ok && class == placeAnonymous {
		class = placePending
		ok = h.places.take(addr, class)
	}
	if !ok {
		refuseTooMany(w, r, class)
		return false
	}
	slot.mu.Lock()
	slot.place = socketPlace{addr: addr, class: class}
	slot.mu.Unlock()
	return true
}

// leaveSocket gives back the place of a websocket that ended.
func (h *Handler) leaveSocket(slot *socketSlot) {
	slot.mu.Lock()
	p := slot.place
	slot.mu.Unlock()
	h.places.give(p.addr, p.class)
}

// admitStream takes the place of an event stream or a multipart
// subscription, whose session is known from its request.
func (h *Handler) admitStream(w http.ResponseWriter, r *http.Request, addr string) (placeClass, bool) {
	class := h.classOf(r.Context())
	if !h.places.take(addr, class) {
		refuseTooMany(w, r, class)
		return class, false
	}
	return class, true
}

// initPlace runs after a websocket's connection_init was accepted, with the
// context the init function gave: a socket signed in by it moves to a
// signed-in place, an anonymous socket waiting in a pending place to an
// anonymous one. A pending socket that finds no place is refused (false).
func (h *Handler) initPlace(ctx context.Context) bool {
	slot, ok := ctx.Value(slotKey{}).(*socketSlot)
	if !ok {
		return true
	}
	to := h.classOf(ctx)
	slot.mu.Lock()
	defer slot.mu.Unlock()
	from := slot.place.class
	if from == to || (from == placeSignedIn && to == placeAnonymous) {
		return true
	}
	if h.places.move(slot.place.addr, from, to) {
		slot.place.class = to
		return true
	}
	return from != placePending
}

// errNoPlace refuses a connection_init that finds no place.
var errNoPlace = errors.New("gqlhttp: no place for this connection")

// admitInit wraps the websocket init function with initPlace: an init
// refused for want of a place is closed with 4429, and what the init
// function set up for the connection (its cleanup) is undone.
func (h *Handler) admitInit(init transport.WebsocketInitFunc) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		authed, ack := ctx, (*transport.InitPayload)(nil)
		if init != nil {
			var err error
			if authed, ack, err = init(ctx, p); err != nil {
				return authed, ack, err
			}
		}
		if h.initPlace(authed) {
			return authed, ack, nil
		}
		runSocketCleanup(authed, CloseTooMany)
		return RefuseInit(ctx, CloseTooMany, "too many anonymous connections from this address; sign in"), nil, errNoPlace
	}
}

// refuseTooMany answers a long-lived connection over its budget with 429
// and closes the connection (see closeAfterRefusal).
func refuseTooMany(w http.ResponseWriter, r *http.Request, class placeClass) {
	msg := "too many long-lived connections from this address"
	if class != placeSignedIn {
		msg = "too many anonymous long-lived connections from this address; sign in for more"
	}
	refuse(w, r, http.StatusTooManyRequests, gqlerr.RateLimited, msg)
}

// refuse answers a request refused before its body was read, and drops
// its connection: Connection: close, and what is left of the body read for
// refusalGrace at most. Left alone, net/http reads up to 256 KiB of an
// unfinished body after the handler returns, with no deadline, to keep the
// connection: a client that sends headers and part of a body would hold
// the connection, its descriptor and a goroutine as long as it likes. The
// grace lets a body already on its way be read, so that closing the
// connection with it unread does not reset it under the client before it
// has read the answer.
func refuse(w http.ResponseWriter, r *http.Request, status int, code gqlerr.Code, msg string) {
	closeAfterRefusal(w, r)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "30")
	}
	gqlerr.WriteHTTP(w, status, code, msg)
}

// closeAfterRefusal marks the connection of a refused request to be
// closed once answered, without reading what is left of its body. Over
// HTTP/2 the request is a stream of a shared connection, which the handler's
// return resets, and Connection: close would end the whole connection
// (GOAWAY): nothing is done there.
func closeAfterRefusal(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 {
		return
	}
	if dw, ok := w.(*detachedWriter); ok {
		if w = dw.writer(); w == nil {
			return
		}
	}
	w.Header().Set("Connection", "close")
	r.Close = true
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusalGrace))
}

// refusalGrace is how long a refused request's connection may take to
// deliver the rest of its body before it is closed.
const refusalGrace = time.Second

// socketOperations caps the operations in flight on a legacy graphql-ws
// socket (gqlgen's transport) while the operation is created, on the
// socket's reader, before gqlgen starts the goroutine that runs it: the
// refusal is sent from the reader, so a client that sends faster than it
// reads waits for its answers instead of piling up goroutines.
// graphql-transport-ws sockets are capped by TransportWS itself.
type socketOperations struct{ max int32 }

var (
	_ graphql.HandlerExtension        = socketOperations{}
	_ graphql.OperationContextMutator = socketOperations{}
)

// admittedKey marks an operation whose place socketOperations took, in its
// operation context's stats; operationGuard gives it back.
const admittedKey = "fingraph.socketPlace"

func (socketOperations) ExtensionName() string                   { return "SocketOperations" }
func (socketOperations) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (s socketOperations) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	slot, ok := ctx.Value(slotKey{}).(*socketSlot)
	if !ok || s.max <= 0 || slot.ownCap.Load() {
		return nil
	}
	if slot.ops.Add(1) > s.max {
		slot.ops.Add(-1)
		return &gqlerror.Error{Message: tooManyOperations, Extensions: map[string]any{"code": string(gqlerr.RateLimited)}}
	}
	oc.Stats.SetExtension(admittedKey, true)
	return nil
}

const tooManyOperations = "too many operations in flight on this connection; complete some first"
