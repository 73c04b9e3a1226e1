// Package relay makes and reads the graph's global object ids (Relay's
// global object identification). A global id is opaque to clients: it is the
// base64url (no padding) of "<TypeName>:<raw>", where the GraphQL type name
// fixes the upstream, so ids of the payments and banking upstreams cannot
// collide even when their raw ids are equal. The raw part is what the
// gateway needs to read the object back: the upstream id alone for objects
// the upstream reads by id, or a composite (corporation and limit, card and
// transaction, ...) for objects reachable only through a parent.
//
// Every way a global id can be wrong (not base64url, an unknown type, the
// wrong type, empty or missing parts, a part no upstream id can be, too
// long) gives the same error: a NOT_FOUND gqlerr.Error wrapping ErrNotFound.
// Resolvers return it as it is; it says nothing about which check failed,
// so a forged id teaches its author nothing.
package relay

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/fingraph/fingraph/gqlerr"
)

// Kind is the GraphQL type name of a node; it is the first part of every
// global id.
type Kind string

// The node types of the graph. Each names its upstream and how many parts
// its raw id has (see Parts).
const (
	Customer         Kind = "Customer"         // payments: customer id
	Order            Kind = "Order"            // payments: order id
	Event            Kind = "Event"            // payments: event id
	Person           Kind = "Person"           // banking: person id
	Corporation      Kind = "Corporation"      // banking: corporation id
	Card             Kind = "Card"             // banking: card id
	Wallet           Kind = "Wallet"           // banking: corporation id, wallet id
	WalletRequisites Kind = "WalletRequisites" // banking: corporation id, requisites id
	KycDocument      Kind = "KycDocument"      // banking: corporation id, document id
	Invoice          Kind = "Invoice"          // banking: corporation id, invoice id
	Limit            Kind = "Limit"            // banking: corporation id, limit id
	CardTransaction  Kind = "CardTransaction"  // banking: card id, transaction id
)

// parts is how many raw parts each kind's id has. The upstream's own id of
// the object is always the last part; the ones before it name the parent the
// upstream reads it through (the banking spec has no read by id for wallets'
// requisites, KYC documents, invoices or card transactions, and reads
// wallets and limits under their corporation).
var parts = map[Kind]int{
	Customer: 1, Order: 1, Event: 1, Person: 1, Corporation: 1, Card: 1,
	Wallet: 2, WalletRequisites: 2, KycDocument: 2, Invoice: 2, Limit: 2, CardTransaction: 2,
}

// Parts is the number of raw parts of kind's ids; 0 for an unknown kind.
func (k Kind) Parts() int { return parts[k] }

const (
	// MaxPart bounds one raw part. Upstream ids are UUIDs or short
	// strings; anything much longer is not an id.
	MaxPart = 128
	// MaxLen bounds a whole global id as a client sends it, checked
	// before any decoding work.
	MaxLen = 512
)

// ErrNotFound is the cause of every refused id: errors.Is(err, ErrNotFound).
var ErrNotFound = errors.New("relay: no object has this id")

// notFound is the error a client sees; fresh each time, as gqlgen may
// attach a path to it.
func notFound() error {
	return &gqlerr.Error{Code: gqlerr.NotFound, Message: "no object has this id", Cause: ErrNotFound}
}

var enc = base64.RawURLEncoding

// ID makes the global id of an object of kind k from its raw parts, parent
// first. It panics when the number of parts is not kind's: that is a
// programming error, caught by any test that shows the object.
func ID(k Kind, raw ...string) string {
	if n := parts[k]; n == 0 || len(raw) != n {
		panic("relay: " + string(k) + " id needs its parts")
	}
	// Every node in a response gets its id made here: build the plain
	// and the encoded form on the stack, so what is allocated is the
	// string made of them (BenchmarkID counts it; longer ids spill to the
	// heap).
	var stack [160]byte
	plain := append(stack[:0], k...)
	for _, p := range raw {
		plain = append(plain, ':')
		plain = appendEscaped(plain, p)
	}
	var encoded [216]byte // enc.EncodedLen(160)
	return string(enc.AppendEncode(encoded[:0], plain))
}

// Ref is a decoded id: its kind and its raw parts, parent first.
type Ref struct {
	Kind  Kind
	Parts []string
	// Global is false when the id was a raw upstream id accepted for
	// compatibility (see Arg); Parts then holds only that id.
	Global bool
}

// Upstream is the upstream's own id of the object: its last part.
func (r Ref) Upstream() string {
	if len(r.Parts) == 0 {
		return ""
	}
	return r.Parts[len(r.Parts)-1]
}

// Parent is the part before the upstream id (the corporation or the card),
// "" when the id has none (a one-part kind, or a raw id).
func (r Ref) Parent() string {
	if len(r.Parts) < 2 {
		return ""
	}
	return r.Parts[0]
}

// Corporation is the banking corporation the id names: its own id for a
// Corporation, its parent for the kinds that live under one (a wallet, its
// requisites, a KYC document, an invoice, a limit); "" for any other kind.
func (r Ref) Corporation() string {
	switch r.Kind {
	case Corporation:
		return r.Upstream()
	case Wallet, WalletRequisites, KycDocument, Invoice, Limit:
		return r.Parent()
	}
	return ""
}

// Decode reads a global id of any kind. Every failure is the same
// NOT_FOUND error.
func Decode(id string) (Ref, error) {
	if id == "" || len(id) > MaxLen {
		return Ref{}, notFound()
	}
	b, err := enc.DecodeString(id)
	if err != nil || !utf8.Valid(b) {
		return Ref{}, notFound()
	}
	fields := strings.Split(string(b), ":")
	k := Kind(fields[0])
	n := parts[k]
	if n == 0 || len(fields)-1 != n {
		return Ref{}, notFound()
	}
	out := Ref{Kind: k, Parts: make([]string, n), Global: true}
	for i, f := range fields[1:] {
		p, ok := unescape(f)
		if !ok || !validPart(p) {
			return Ref{}, notFound()
		}
		out.Parts[i] = p
	}
	// Only the canonical spelling of an id is one: "%41" for "A" would be
	// a second id of the same object, which caches keyed by id must not see.
	if ID(k, out.Parts...) != id {
		return Ref{}, notFound()
	}
	return out, nil
}

// Arg reads an ID argument that names an object of kind k: its global id,
// or, for compatibility with clients written before global ids, the raw
// upstream id. A global id of another kind is NOT_FOUND. A string that is
// not a global id is taken as a raw id when an upstream id could be it
// (non-empty, bounded, no "." or ".." segment, no control character);
// otherwise NOT_FOUND.
func Arg(k Kind, id string) (Ref, error) {
	if r, err := Decode(id); err == nil {
		if r.Kind != k {
			return Ref{}, notFound()
		}
		return r, nil
	}
	if !validPart(id) {
		return Ref{}, notFound()
	}
	return Ref{Kind: k, Parts: []string{id}}, nil
}

// ArgID is Arg for callers that need only the upstream's own id of the
// object (they know its parent from elsewhere, or it has none).
func ArgID(k Kind, id string) (string, error) {
	r, err := Arg(k, id)
	if err != nil {
		return "", err
	}
	return r.Upstream(), nil
}

// validPart applies the rules every upstream id follows: non-empty,
// bounded, valid UTF-8 without control characters, and never a "." or ".."
// path segment (which would move a call to another route, see
// roundtrip.ErrInvalidID).
func validPart(p string) bool {
	if p == "" || len(p) > MaxPart || !utf8.ValidString(p) {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// appendEscaped appends p with ':' (the separator) and '%' (the escape)
// escaped, so that no raw id can split into two parts.
func appendEscaped(dst []byte, p string) []byte {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%':
			dst = append(dst, "%25"...)
		case ':':
			dst = append(dst, "%3A"...)
		default:
			dst = append(dst, p[i])
		}
	}
	return dst
}

func unescape(p string) (string, bool) {
	if !strings.Contains(p, "%") {
		return p, true
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		switch {
		case strings.HasPrefix(p[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(p[i:], "%3A"):
			b.WriteByte(':')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}
