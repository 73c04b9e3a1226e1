package events

import (
	"encoding/base64"
	"regexp"
	"slices"
)

// The EVENTS stream's subjects say whose an event is, so that a reader
// asks the server for its own events only and never reads, or pays for,
// another tenant's:
//
//	fingraph.events.<source>.<owner>.<name>
//
// <owner> is the corporation of a banking-side event (PayloadCorporation),
// as is when it is letters, digits and '-', else '~' and its unpadded
// base64url; a payments event, or a banking-side one without a
// corporation, has the owner '~'. docs/events.md describes the layout.

// noOwner is the owner token of an event that belongs to no corporation.
const noOwner = "~"

var plainOwner = regexp.MustCompile(`^[A-Za-z0-9-]{1,128}$`)

// ownerToken is the subject token of a corporation id.
func ownerToken(corporationID string) string {
	switch {
	case corporationID == "":
		return noOwner
	case plainOwner.MatchString(corporationID):
		return corporationID
	}
	return noOwner + base64.RawURLEncoding.EncodeToString([]byte(corporationID))
}

// subjectOf is the subject an event is stored under.
func subjectOf(e *Event) string {
	owner := noOwner
	if BankingSide(e.Source) {
		owner = ownerToken(e.PayloadString(PayloadCorporation))
	}
	return eventSubject + e.Source + "." + owner + "." + e.Name
}

// Scope is what a reader may see of the stream: the subjects it reads are
// derived from it, so that nothing outside it is read at all.
type Scope struct {
	// Payments lets the merchant's payments events through.
	Payments bool
	// AllCorporations lets every banking-side event through.
	AllCorporations bool
	// Corporations are the corporations whose banking-side events pass.
	Corporations []string
}

// maxNamedSubjects bounds the subjects a filter spells out name by name;
// past it, a scope's subjects name its owners only and the names are
// checked on the events read (which are the reader's own).
const maxNamedSubjects = 256

// subjects are the stream subjects f reads: none (nil) for a filter that
// selects nothing, ["fingraph.events.>"]-like wildcards for the whole
// stream. names is f.nameSet().
func (f Filter) subjects(names map[string]struct{}) []string {
	sc := f.scope()
	var owners []string // "<source>.<owner>" patterns
	if sc == nil {
		owners = []string{"*.*"}
	} else {
		if sc.Payments {
			owners = append(owners, SourcePayments+"."+noOwner)
		}
		if sc.AllCorporations {
			owners = append(owners, SourceGateway+".*", SourceBanking+".*")
		} else {
			seen := map[string]bool{}
			for _, c := range sc.Corporations {
				t := ownerToken(c)
				if c == "" || seen[t] {
					continue
				}
				seen[t] = true
				owners = append(owners, SourceGateway+"."+t, SourceBanking+"."+t)
			}
		}
	}
	if len(owners) == 0 {
		return nil
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	var out []string
	if len(sorted) == 0 || len(owners)*len(sorted) > maxNamedSubjects {
		for _, o := range owners {
			out = append(out, eventSubject+o+".*")
		}
		return out
	}
	for _, o := range owners {
		for _, n := range sorted {
			out = append(out, eventSubject+o+"."+n)
		}
	}
	return out
}

// scope is f's scope: Scope, or, for a filter that gives only
// Corporations, those corporations' banking-side events; nil for the
// whole stream.
func (f Filter) scope() *Scope {
	if f.Scope != nil {
		return f.Scope
	}
	if len(f.Corporations) > 0 {
		return &Scope{Corporations: f.Corporations}
	}
	return nil
}

// corporations are the corporations the fan-out indexes f's subscriber
// under: nil for a subscriber it checks against every event.
func (f Filter) corporations() []string {
	sc := f.scope()
	if sc == nil || sc.Payments || sc.AllCorporations {
		return nil
	}
	if len(sc.Corporations) == 0 {
		return []string{""} // sees no corporation: indexed under none
	}
	return sc.Corporations
}
