package loaders

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"
	"golang.org/x/sync/errgroup"

	"github.com/fingraph/fingraph/upstream/banking"
)

const (
	// pageSize is the page size the banking loaders list with: the
	// upstream's maximum, so that few pages answer a whole request.
	pageSize = 100
	// MaxListed bounds how many records one upstream listing is read to
	// (every page up to it): the schema says so where it matters.
	MaxListed = 5000
	// fanOut is how many upstream calls one batch makes at a time where the
	// upstream has no batch route (settings, API keys, per-corporation
	// listings, KYC documents, pending actions, persons past the first page)
	// or a listing spans several pages: enough to hide latency, few enough
	// not to flood one upstream from one request.
	fanOut = 8
)

// Banking is the set of banking loaders of one request. Every call goes out
// with the request's session token (from the context), so these caches hold
// one principal's view and are never shared.
type Banking struct {
	// Corporation loads corporations by id (or account id): one read of the
	// corporations the principal sees, whatever the number of keys.
	Corporation Loader[string, *banking.Corporation]
	// CorporationPersons loads the persons of corporations by corporation
	// id: one read of the person listing for any number of corporations.
	CorporationPersons Loader[string, []*banking.Person]
	// CorporationSettings loads corporations' settings: one upstream call
	// per distinct corporation (there is no batch route), fanOut at a time.
	CorporationSettings Loader[string, *banking.CorporationSettings]
	// CorporationAPIKeys loads corporations' API keys the same way.
	CorporationAPIKeys Loader[string, []*banking.APIKey]

	settings     *ahead[*banking.CorporationSettings]
	me           *memo[*banking.Person]
	current      *memo[*banking.Corporation]
	persons      *memo[[]*banking.Person]
	personsFirst *personsPage
	corporations *memo[[]*banking.Corporation]
	bankingCl    *banking.Client
}

// personsPage is the first page of the person listing, read at most once
// per operation and shared by the Person loader (cardholders) and the full
// listing (Corporation.persons): a dashboard that shows both reads it once.
type personsPage struct {
	client *banking.Client
	memo[*banking.PersonList]
	// index is the page's persons by id, built once per operation for
	// every batch that looks cardholders up in it.
	index memo[map[string]*banking.Person]
	// beyond reads, once per operation each, the persons the first page
	// lacks when the listing has more pages (there is no batch read by
	// ids): the Person loader's batches and each list's batch resolver
	// (PersonsOf) ask through it, so a cardholder two lists name is one
	// read, as it was when only the loader asked.
	beyond *ahead[*banking.Person]
}

func newPersonsPage(b *banking.Client) *personsPage {
	return &personsPage{client: b, beyond: newAhead(func(ctx context.Context, id string) (*banking.Person, error) {
		p, err := b.Persons.Get(ctx, id)
		if banking.IsNotFound(err) {
			return nil, nil // a missing person is null, not an error
		}
		return p, err
	})}
}

// get reads the first page: the upstream's largest, unsorted.
func (f *personsPage) get(ctx context.Context) (*banking.PersonList, error) {
	return f.do(func() (*banking.PersonList, error) {
		return f.client.Persons.List(ctx, &banking.ListOptions{Limit: pageSize})
	})
}

// byID is the first page's persons by id, and the page.
func (f *personsPage) byID(ctx context.Context) (map[string]*banking.Person, *banking.PersonList, error) {
	list, err := f.get(ctx)
	if err != nil || list == nil {
		return nil, list, err
	}
	index, _ := f.index.do(func() (map[string]*banking.Person, error) {
		m := make(map[string]*banking.Person, len(list.List))
		for _, p := range list.List {
			m[p.ID] = p
		}
		return m, nil
	})
	return index, list, nil
}

func (l *Banking) init(b *banking.Client, wait time.Duration, personsFirst *personsPage) {
	l.settings = newAhead(b.Corporations.Settings)
	l.CorporationSettings.init(perKey(l.settings.read), wait)
	l.CorporationAPIKeys.init(perKey(b.APIKeys.List), wait)
	l.me = &memo[*banking.Person]{}
	l.current = &memo[*banking.Corporation]{}
	l.persons = &memo[[]*banking.Person]{}
	l.personsFirst = personsFirst
	l.corporations = &memo[[]*banking.Corporation]{}
	l.bankingCl = b
	l.Corporation.init(l.corporationBatch, wait)
	l.CorporationPersons.init(l.corporationPersonsBatch, wait)
}

// Me reads GET /persons/me once per request, however many fields ask.
func (l *Banking) Me(ctx context.Context) (*banking.Person, error) {
	return l.me.do(func() (*banking.Person, error) { return l.bankingCl.Persons.Me(ctx) })
}

// PrimeMe stores a person read elsewhere (sign-in) as this request's me.
func (l *Banking) PrimeMe(p *banking.Person) { l.me.prime(p) }

// PrimeCurrentCorporation stores a corporation read elsewhere (sign-in) as
// this request's current corporation.
func (l *Banking) PrimeCurrentCorporation(c *banking.Corporation) { l.current.prime(c) }

// CurrentCorporation reads GET /corporations/current once per request.
func (l *Banking) CurrentCorporation(ctx context.Context) (*banking.Corporation, error) {
	return l.current.do(func() (*banking.Corporation, error) { return l.bankingCl.Corporations.Current(ctx) })
}

// PersonsByCorporation reads every person the principal sees, once per
// request (every page, up to MaxListed), grouped by CorporationOf.
func (l *Banking) PersonsByCorporation(ctx context.Context) (map[string][]*banking.Person, error) {
	all, err := l.persons.do(func() ([]*banking.Person, error) {
		list := func(ctx context.Context, o *banking.ListOptions) (*banking.PersonList, error) {
			if o.Offset == 0 {
				return l.personsFirst.get(ctx) // the page the Person loader reads too
			}
			return l.bankingCl.Persons.List(ctx, o)
		}
		return listAll(ctx, list, func(p *banking.Person) string { return p.ID })
	})
	byCorp := map[string][]*banking.Person{}
	for _, p := range all {
		if id := CorporationOf(p); id != "" {
			byCorp[id] = append(byCorp[id], p)
		}
	}
	return byCorp, err
}

// allCorporations reads every corporation the principal sees, once per
// request (every page, up to MaxListed). The spec has no read by id.
func (l *Banking) allCorporations(ctx context.Context) ([]*banking.Corporation, error) {
	return l.corporations.do(func() ([]*banking.Corporation, error) {
		return listAll(ctx, l.bankingCl.Corporations.List, func(c *banking.Corporation) string { return c.ID })
	})
}

func (l *Banking) corporationBatch(ctx context.Context, ids []string) []*dataloader.Result[*banking.Corporation] {
	all, err := l.allCorporations(ctx)
	byID := make(map[string]*banking.Corporation, 2*len(all))
	for _, c := range all {
		byID[c.ID] = c
		if c.AccountID != "" {
			byID[c.AccountID] = c
		}
	}
	out := make([]*dataloader.Result[*banking.Corporation], len(ids))
	for i, id := range ids {
		out[i] = &dataloader.Result[*banking.Corporation]{Data: byID[id], Error: err}
	}
	return out
}

func (l *Banking) corporationPersonsBatch(ctx context.Context, ids []string) []*dataloader.Result[[]*banking.Person] {
	byCorp, err := l.PersonsByCorporation(ctx)
	out := make([]*dataloader.Result[[]*banking.Person], len(ids))
	for i, id := range ids {
		out[i] = &dataloader.Result[[]*banking.Person]{Data: byCorp[id], Error: err}
	}
	return out
}

// perKey batches a route that reads one key at a time: one call per key,
// fanOut at a time, each key with its own result or error.
func perKey[K comparable, V any](get func(context.Context, K) (V, error)) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		each(len(keys), func(i int) {
			v, err := get(ctx, keys[i])
			out[i] = &dataloader.Result[V]{Data: v, Error: err}
		})
		return out
	}
}

// each runs f(0) to f(n-1), fanOut at a time, and returns when all are
// done. A batch's keys are distinct (the loader's cache answers a repeated
// key), so this is one upstream call per distinct key with a bounded number
// in flight; f records its key's own error, never the batch's.
func each(n int, f func(i int)) {
	if n == 1 {
		f(0) // the common single key needs no goroutine
		return
	}
	var g errgroup.Group
	g.SetLimit(fanOut)
	for i := range n {
		g.Go(func() error { f(i); return nil })
	}
	_ = g.Wait()
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

// memo runs a call at most once and remembers its outcome.
type memo[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
	err  error
}

func (m *memo[T]) do(f func() (T, error)) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done {
		m.v, m.err = f()
		m.done = true
	}
	return m.v, m.err
}

func (m *memo[T]) prime(v T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.v, m.err, m.done = v, nil, true
}

// CorporationOf reads a person's corporation id from its account object,
// whose shape the spec does not show: corporation_id when present, else the
// account id (which the Corporation loader also accepts).
func CorporationOf(p *banking.Person) string {
	if p == nil {
		return ""
	}
	return p.Account.Corporation()
}
