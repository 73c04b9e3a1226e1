package loaders

import (
	"context"
	"errors"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/fingraph/fingraph/upstream/banking"
)

const (
	// pageSize is the page size the banking reads list with: the
	// upstream's maximum, so that few pages answer a whole request.
	pageSize = 100
	// MaxListed bounds how many records one upstream listing is read to
	// (every page up to it): the schema says so where it matters.
	MaxListed = 5000
	// fanOut is how many upstream calls one Read has in flight at a time
	// (settings, API keys, per-corporation listings, KYC documents, pending
	// actions, card transactions, persons past the first page), and how many
	// pages of a listing are read at a time: enough to hide latency, few
	// enough not to flood one upstream from one request.
	fanOut = 8
)

// Banking is the banking reads of one operation. Every call goes out with
// the operation's session token (from the context), so these hold one
// principal's view and are never shared.
type Banking struct {
	// Me reads GET /persons/me: the signed-in person.
	Me Read[Whole, *banking.Person]
	// CurrentCorporation reads GET /corporations/current.
	CurrentCorporation Read[Whole, *banking.Corporation]
	// Corporation finds a corporation by id (or account id) in the one
	// listing of the corporations the principal sees: the spec has no read
	// by id.
	Corporation Read[string, *banking.Corporation]
	// PersonsPage reads the first page of the person listing, which the
	// cardholders (Person) and PersonsByCorporation share: a dashboard that
	// shows both reads it once.
	PersonsPage Read[Whole, *PersonsPage]
	// PersonsByCorporation reads every person the principal sees (every
	// page, up to MaxListed), grouped by CorporationOf.
	PersonsByCorporation Read[Whole, map[string][]*banking.Person]
	// CorporationPersons finds a corporation's persons in
	// PersonsByCorporation: one listing for any number of corporations.
	CorporationPersons Read[string, []*banking.Person]
	// CorporationSettings reads corporations' settings: one call per
	// corporation (there is no batch route).
	CorporationSettings Read[string, *banking.CorporationSettings]
	// CorporationAPIKeys reads corporations' API keys the same way.
	CorporationAPIKeys Read[string, []*banking.APIKey]

	corporations Read[Whole, map[string]*banking.Corporation]
}

// PersonsPage is the first page of the person listing, and its persons by
// id.
type PersonsPage struct {
	*banking.PersonList
	byID map[string]*banking.Person
}

func (l *Banking) init(b BankingSource, w *Workers) {
	l.Me.init(func(ctx context.Context, _ Whole) (*banking.Person, error) { return b.Persons.Me(ctx) }, w)
	l.CurrentCorporation.init(func(ctx context.Context, _ Whole) (*banking.Corporation, error) { return b.Corporations.Current(ctx) }, w)
	l.corporations.init(func(ctx context.Context, _ Whole) (map[string]*banking.Corporation, error) {
		all, err := listAll(ctx, b.Corporations.List, func(c *banking.Corporation) string { return c.ID })
		byID := make(map[string]*banking.Corporation, 2*len(all))
		for _, c := range all {
			byID[c.ID] = c
			if c.AccountID != "" {
				byID[c.AccountID] = c
			}
		}
		return byID, err
	}, w)
	l.Corporation.init(func(ctx context.Context, id string) (*banking.Corporation, error) {
		byID, err := l.corporations.Get(ctx, Whole{})
		return byID[id], err
	}, w)
	l.PersonsPage.init(func(ctx context.Context, _ Whole) (*PersonsPage, error) {
		// The upstream's largest page, unsorted.
		list, err := b.Persons.List(ctx, &banking.ListOptions{Limit: pageSize})
		if err != nil || list == nil {
			return nil, err
		}
		byID := make(map[string]*banking.Person, len(list.List))
		for _, p := range list.List {
			byID[p.ID] = p
		}
		return &PersonsPage{PersonList: list, byID: byID}, nil
	}, w)
	l.PersonsByCorporation.init(func(ctx context.Context, _ Whole) (map[string][]*banking.Person, error) {
		list := func(ctx context.Context, o *banking.ListOptions) (*banking.PersonList, error) {
			if o.Offset == 0 {
				first, err := l.PersonsPage.Get(ctx, Whole{})
				if first == nil {
					return nil, err
				}
				return first.PersonList, err
			}
			return b.Persons.List(ctx, o)
		}
		all, err := listAll(ctx, list, func(p *banking.Person) string { return p.ID })
		byCorp := map[string][]*banking.Person{}
		for _, p := range all {
			if id := CorporationOf(p); id != "" {
				byCorp[id] = append(byCorp[id], p)
			}
		}
		return byCorp, err
	}, w)
	l.CorporationPersons.init(func(ctx context.Context, id string) ([]*banking.Person, error) {
		byCorp, err := l.PersonsByCorporation.Get(ctx, Whole{})
		return byCorp[id], err
	}, w)
	l.CorporationSettings.init(b.Corporations.Settings, w)
	l.CorporationAPIKeys.init(b.APIKeys.List, w)
}

// listAll reads a paged listing to its end, or to MaxListed records: the
// first page says how many there are, the rest are read fanOut at a time.
// Records that shift between pages while they are read appear once.
func listAll[T any](ctx context.Context, list func(context.Context, *banking.ListOptions) (*banking.Page[T], error), id func(T) string) ([]T, error) {
	first, err := list(ctx, &banking.ListOptions{Limit: pageSize})
	if err != nil {
		return nil, err
	}
	total := min(first.Meta.NumberOfRecords, MaxListed)
	if !first.Meta.HasMore || total <= len(first.List) {
		return first.List, nil // the whole listing, or a count too low to page by
	}
	pages := make([][]T, (total+pageSize-1)/pageSize)
	pages[0] = first.List
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fanOut)
	for p := 1; p < len(pages); p++ {
		g.Go(func() error {
			page, err := list(gctx, &banking.ListOptions{Limit: pageSize, Offset: p * pageSize})
			if err != nil {
				return err // ErrOffsetNotShown is degraded below to the first page
			}
			pages[p] = page.List
			return nil
		})
	}
	if err := g.Wait(); errors.Is(err, banking.ErrOffsetNotShown) {
		// An upstream without offset paging (the strict sandbox): the first
		// page is all that can be read.
		return first.List, nil
	} else if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, total)
	all := make([]T, 0, total)
	for _, it := range slices.Concat(pages...) {
		if k := id(it); !seen[k] && len(all) < MaxListed {
			seen[k] = true
			all = append(all, it)
		}
	}
	return all, nil
}

// CorporationOf reads a person's corporation id from its account object,
// whose shape the spec does not show: corporation_id when present, else the
// account id (which the Corporation read also accepts).
func CorporationOf(p *banking.Person) string {
	if p == nil {
		return ""
	}
	return p.Account.Corporation()
}
