package resolvers

import (
	"github.com/fingraph/fingraph/relay"
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
// Parents are rewritten before their children, so a child compares with
// the parent's upstream id.
func upstreamIDs(args ...idArg) error {
	for _, a := range args {
		if a.parent == nil {
			if err := toUpstream(a.kind, a.p, ""); err != nil {
				return err
			}
		}
	}
	for _, a := range args {
		if a.parent != nil {
			if err := toUpstream(a.kind, a.p, *a.parent); err != nil {
				return err
			}
		}
	}
	return nil
}

func toUpstream(k relay.Kind, p *string, parent string) error {
	if p == nil {
		return nil
	}
	ref, err := relay.Decode(*p)
	if err != nil {
		return nil // not a global id: a raw upstream id, left to the resolver's rules
	}
	if ref.Kind != k {
		return notFoundNode()
	}
	if parent != "" && ref.Parent() != "" && ref.Parent() != parent {
		return notFoundNode()
	}
	*p = ref.Upstream()
	return nil
}

// upstreamIDList rewrites a list argument of ids of kind k in place, as
// upstreamIDs does.
func upstreamIDList(k relay.Kind, ids []string) error {
	for i := range ids {
		if err := toUpstream(k, &ids[i], ""); err != nil {
			return err
		}
	}
	return nil
}
