package resolvers

import (
	"context"
	"errors"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/session"
)

// idArg is one ID argument a resolver reads, and the node type it names.
type idArg struct {
	kind relay.Kind
	p    *string
	// parent, for a composite id (a wallet, a limit, ...), is the
	// argument that names its corporation, when the input has one.
	parent *string
}

// arg names an ID argument of kind k (nil for an absent optional one).
func arg(k relay.Kind, p *string) idArg { return idArg{kind: k, p: p} }

// childArg names an ID argument of kind k whose object lives under the
// corporation named by the parent argument.
func childArg(k relay.Kind, p, parent *string) idArg { return idArg{kind: k, p: p, parent: parent} }

// upstreamIDs is the one place where a resolver reads its ID arguments. It
// rewrites each in place to the upstream id the clients and loaders use:
//   - a global id of the expected type becomes its upstream id;
//   - a global id of another type is NOT_FOUND, before any upstream call
//     (so is a composite id whose corporation is not the one the input
//     names);
//   - anything else is left as it is: a raw upstream id, still accepted for
//     compatibility (docs/relay.md), checked by the resolver's own rules.
//
// Every corporation an argument names is then held to the caller's scope,
// before any upstream call and whether it exists or not: a person or an
// API client names its own corporation only. Another corporation's id is
// FORBIDDEN (ownScope); the id of an object under another corporation (a
// wallet, requisites, a KYC document, an invoice, a limit) is NOT_FOUND,
// as node answers it.
//
// Parents are rewritten before their children, so a child compares with
// the parent's upstream id.
func upstreamIDs(ctx context.Context, args ...idArg) error {
	for _, a := range args {
		if a.parent == nil {
			if err := toUpstream(ctx, a.kind, a.p, ""); err != nil {
				return err
			}
		}
	}
	for _, a := range args {
		if a.parent != nil {
			if err := toUpstream(ctx, a.kind, a.p, *a.parent); err != nil {
				return err
			}
		}
	}
	return nil
}

func toUpstream(ctx context.Context, k relay.Kind, p *string, parent string) error {
	if p == nil {
		return nil
	}
	ref, err := relay.Decode(*p)
	if err != nil {
		// Not a global id: a raw upstream id, left to the resolver's
		// rules, but for the scope of a corporation it names.
		if k == relay.Corporation {
			return ownScope(ctx, *p)
		}
		return nil
	}
	if ref.Kind != k {
		return notFoundNode()
	}
	if parent != "" && ref.Parent() != "" && ref.Parent() != parent {
		return notFoundNode()
	}
	switch corp := ref.Corporation(); {
	case k == relay.Corporation:
		if err := ownScope(ctx, corp); err != nil {
			return err
		}
	case !inScope(ctx, corp):
		return notFoundNode() // an object of another corporation, as node says
	}
	*p = ref.Upstream()
	return nil
}

// upstreamIDList rewrites a list argument of ids of kind k in place, as
// upstreamIDs does.
func upstreamIDList(ctx context.Context, k relay.Kind, ids []string) error {
	for i := range ids {
		if err := toUpstream(ctx, k, &ids[i], ""); err != nil {
			return err
		}
	}
	return nil
}

// ownScope refuses a corporation a person or an API client does not belong
// to: each acts on its own corporation only (the banking upstream would
// refuse the call; the gateway refuses it without one). Staff name any
// corporation, and introducers those they introduced, which only the
// upstream knows. An empty id is left to the resolver's own rules.
func ownScope(ctx context.Context, corporationID string) error {
	if inScope(ctx, corporationID) {
		return nil
	}
	return &gqlerr.Error{Code: gqlerr.Forbidden, Message: "you act on your own corporation only", Cause: errOtherCorporation}
}

// inScope is whether the caller may name corporationID (see ownScope).
func inScope(ctx context.Context, corporationID string) bool {
	s := session.From(ctx)
	if s == nil || corporationID == "" || s.CorporationID == "" {
		return true
	}
	return (s.Kind != session.Person && s.Kind != session.APIClient) || corporationID == s.CorporationID
}

// errOtherCorporation is the cause of ownScope's refusal, for the readers
// that answer null instead (corporation(id)).
var errOtherCorporation = errors.New("resolvers: a corporation outside the caller's scope")
