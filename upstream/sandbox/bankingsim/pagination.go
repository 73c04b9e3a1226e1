package bankingsim

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Pagination limits: the spec leaves the page size open; these are ours.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// page is a parsed pagination query: meta[sort_by], meta[sort_type],
// meta[limit] and the sandbox's meta[offset].
type page struct {
	sortBy   string // as the client spelled it, echoed in meta
	key      string // canonical sort key
	sortType string
	limit    int
	offset   int
}

// parsePage reads the pagination query. sortable maps each accepted
// spelling of a sort field to its canonical key.
func (s *Sim) parsePage(r *http.Request, defSortBy, defSortType string, sortable map[string]string) (page, errs) {
	q := r.URL.Query()
	var e errs
	pg := page{sortBy: defSortBy, sortType: defSortType, limit: DefaultPageLimit}
	if v := q.Get("meta[sort_by]"); v != "" {
		pg.sortBy = v
	}
	if k, ok := sortable[pg.sortBy]; ok {
		pg.key = k
	} else {
		e.invalid("meta[sort_by]", "cannot sort by "+pg.sortBy)
	}
	if v := q.Get("meta[sort_type]"); v != "" {
		pg.sortType = strings.ToUpper(v)
		if pg.sortType != "ASC" && pg.sortType != "DESC" {
			e.invalid("meta[sort_type]", "meta[sort_type] must be ASC or DESC")
		}
	}
	if v := q.Get("meta[limit]"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageLimit {
			e.invalid("meta[limit]", "meta[limit] must be 1 to "+itoa(MaxPageLimit))
		}
		pg.limit = n
	}
	if v := q.Get("meta[offset]"); v != "" && s.opts.Strict {
		e.invalid("meta[offset]", "meta[offset] is a sandbox addition, not served in strict mode")
	} else if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			e.invalid("meta[offset]", "meta[offset] must be a number from 0")
		}
		pg.offset = n
	}
	return pg, e
}

// paginate sorts items by less (ties broken by id, always ascending, so
// pages are stable) and answers the spec's List response.
func paginate[T any](pg page, items []T, less func(a, b T) int, id func(T) string, view func(T) any) map[string]any {
	sort.SliceStable(items, func(i, j int) bool {
		c := less(items[i], items[j])
		if pg.sortType == "DESC" {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
		return id(items[i]) < id(items[j])
	})
	total := len(items)
	lo := min(pg.offset, total)
	hi := min(lo+pg.limit, total)
	list := make([]any, 0, hi-lo)
	for _, it := range items[lo:hi] {
		list = append(list, view(it))
	}
	return map[string]any{
		"list": list,
		"meta": map[string]any{
			"number_of_records": total,
			"limit":             pg.limit,
			"has_more":          hi < total,
			"sort_by":           pg.sortBy,
			"sort_type":         pg.sortType,
		},
	}
}
