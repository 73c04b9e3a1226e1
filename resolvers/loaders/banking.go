package loaders

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/fingraph/fingraph/upstream/banking"
)

// listLimit is the page size the banking loaders list with: the upstream's
// maximum, so that one listing answers a whole request's keys.
const listLimit = 100

// Banking is the set of banking loaders of one request. Every call goes out
// with the request's session token (from the context), so these caches hold
// one principal's view and are never shared.
type Banking struct {
	// Corporation loads corporations by id (or account id): one listing of
	// the corporations the principal sees, whatever the number of keys.
	Corporation *dataloader.Loader[string, *banking.Corporation]
	// CorporationPersons loads the persons of corporations by corporation
	// id: one person listing for any number of corporations.
	CorporationPersons *dataloader.Loader[string, []*banking.Person]

	me        memo[*banking.Person]
	current   memo[*banking.Corporation]
	bankingCl *banking.Client
}

func newBanking(b *banking.Client) Banking {
	return Banking{
		Corporation:        dataloader.NewBatchedLoader(corporationBatch(b), dataloader.WithWait[string, *banking.Corporation](Wait)),
		CorporationPersons: dataloader.NewBatchedLoader(corporationPersonsBatch(b), dataloader.WithWait[string, []*banking.Person](Wait)),
		bankingCl:          b,
	}
}

// Me reads GET /persons/me once per request, however many fields ask.
func (l *Banking) Me(ctx context.Context) (*banking.Person, error) {
	return l.me.do(func() (*banking.Person, error) {
		p, err := l.bankingCl.Persons.Me(ctx)
		return p, err
	})
}

// PrimeMe stores a person read elsewhere (sign-in) as this request's me.
func (l *Banking) PrimeMe(p *banking.Person) { l.me.prime(p) }

// PrimeCurrentCorporation stores a corporation read elsewhere (sign-in) as
// this request's current corporation.
func (l *Banking) PrimeCurrentCorporation(c *banking.Corporation) { l.current.prime(c) }

// CurrentCorporation reads GET /corporations/current once per request.
func (l *Banking) CurrentCorporation(ctx context.Context) (*banking.Corporation, error) {
	return l.current.do(func() (*banking.Corporation, error) {
		c, err := l.bankingCl.Corporations.Current(ctx)
		return c, err
	})
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

func corporationBatch(b *banking.Client) dataloader.BatchFunc[string, *banking.Corporation] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[*banking.Corporation] {
		out := make([]*dataloader.Result[*banking.Corporation], len(ids))
		list, err := b.Corporations.List(ctx, &banking.ListOptions{Limit: listLimit})
		byID := map[string]*banking.Corporation{}
		if list != nil {
			for _, c := range list.List {
				byID[c.ID] = c
				if c.AccountID != "" {
					byID[c.AccountID] = c
				}
			}
		}
		for i, id := range ids {
			out[i] = &dataloader.Result[*banking.Corporation]{Data: byID[id], Error: err}
		}
		return out
	}
}

func corporationPersonsBatch(b *banking.Client) dataloader.BatchFunc[string, []*banking.Person] {
	return func(ctx context.Context, ids []string) []*dataloader.Result[[]*banking.Person] {
		out := make([]*dataloader.Result[[]*banking.Person], len(ids))
		list, err := b.Persons.List(ctx, &banking.ListOptions{Limit: listLimit})
		byCorp := map[string][]*banking.Person{}
		if list != nil {
			for _, p := range list.List {
				if id := CorporationOf(p); id != "" {
					byCorp[id] = append(byCorp[id], p)
				}
			}
		}
		for i, id := range ids {
			out[i] = &dataloader.Result[[]*banking.Person]{Data: byCorp[id], Error: err}
		}
		return out
	}
}

// CorporationOf reads a person's corporation id from its account object,
// whose shape the spec does not show: corporation_id when present, else the
// account id (which the Corporation loader also accepts).
func CorporationOf(p *banking.Person) string {
	if p == nil || len(p.Account) == 0 {
		return ""
	}
	var acc struct {
		ID            string `json:"id"`
		CorporationID string `json:"corporation_id"`
	}
	if json.Unmarshal(p.Account, &acc) != nil {
		return ""
	}
	if acc.CorporationID != "" {
		return acc.CorporationID
	}
	return acc.ID
}
