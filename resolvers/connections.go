package resolvers

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Page sizes of every connection: first is 1 to maxFirst, defaultFirst
// when not given. The upstream's meta[limit] has the same bounds.
const (
	defaultFirst = 20
	maxFirst     = 100
)

// offsetCursorVersion is written into every offset cursor, so that a later
// change of what a cursor holds refuses old cursors instead of misreading
// them.
const offsetCursorVersion = 1

// maxCursorLen bounds what is decoded: a cursor the gateway hands out is
// about 50 characters.
const maxCursorLen = 200

// maxCursorOffset bounds an offset read from a cursor; a listing this long
// is far beyond what the upstream serves, and the bound keeps offset+1 and
// the offsets of a page far from overflow.
const maxCursorOffset = 1 << 30

// offsetCursor is what an edge cursor of an offset-paged upstream listing
// holds: the edge's position in its listing and a fingerprint of the
// listing (what it lists and its sort), so that a cursor is only accepted
// by the listing it came from.
type offsetCursor struct {
	V int    `json:"v"`
	O int    `json:"o"`
	F string `json:"f"`
}

// offsetPage is a validated page request of an offset-paged listing.
type offsetPage struct {
	limit       int
	offset      int
	fingerprint string
}

// listingFingerprint names a listing and its order: the same arguments give
// the same fingerprint, any other listing or order another. Defaults are
// filled in by the caller, so leaving out an argument and giving its
// default name one listing.
func listingFingerprint(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

// pageRequest validates first and after against the listing named by
// fingerprint: first 1..maxFirst, after a cursor of this very listing.
func pageRequest(first *int64, after *string, fingerprint string) (offsetPage, error) {
	pg := offsetPage{fingerprint: fingerprint}
	var err error
	if pg.limit, err = pageSize(first); err != nil {
		return pg, err
	}
	if after == nil || *after == "" {
		return pg, nil
	}
	c, ok := decodeOffsetCursor(*after)
	if !ok {
		return pg, gqlerr.BadInput("after", "after is not a cursor this gateway handed out")
	}
	if c.F != fingerprint {
		return pg, gqlerr.BadInput("after", "this cursor belongs to another listing (other arguments or another parent); page with the arguments that gave it")
	}
	pg.offset = c.O + 1
	return pg, nil
}

// pageSize is first, 1..maxFirst, defaultFirst when not given.
func pageSize(first *int64) (int, error) {
	if first == nil {
		return defaultFirst, nil
	}
	if *first < 1 || *first > maxFirst {
		return 0, gqlerr.BadInput("first", "first must be between 1 and %d", maxFirst)
	}
	return int(*first), nil
}

func decodeOffsetCursor(s string) (offsetCursor, bool) {
	var c offsetCursor
	if len(s) > maxCursorLen {
		return c, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(raw, &c) != nil {
		return c, false
	}
	if c.V != offsetCursorVersion || c.O < 0 || c.O > maxCursorOffset || c.F == "" {
		return c, false
	}
	return c, true
}

func encodeOffsetCursor(offset int, fingerprint string) string {
	raw, _ := json.Marshal(offsetCursor{V: offsetCursorVersion, O: offset, F: fingerprint})
	return base64.RawURLEncoding.EncodeToString(raw)
}

// options is the upstream query for this page.
func (pg offsetPage) options(sortBy string, dir *model.SortDirection) *banking.ListOptions {
	o := &banking.ListOptions{SortBy: sortBy, Limit: pg.limit, Offset: pg.offset}
	if dir != nil {
		o.SortType = banking.SortType(*dir)
	}
	return o
}

// cursors returns the cursors of n edges of this page and its PageInfo,
// with hasNextPage as the upstream's has_more says it.
func (pg offsetPage) cursors(n int, meta banking.Meta) ([]string, *model.PageInfo) {
	cs := make([]string, n)
	for i := range cs {
		cs[i] = encodeOffsetCursor(pg.offset+i, pg.fingerprint)
	}
	info := &model.PageInfo{HasNextPage: meta.HasMore, HasPreviousPage: pg.offset > 0}
	if n > 0 {
		info.StartCursor, info.EndCursor = &cs[0], &cs[n-1]
	}
	return cs, info
}

// offsetServed refuses a page the upstream cannot serve: offset paging is
// a sandbox addition (meta[offset]) the strict sandbox leaves out, so only
// first pages are served there.
func (r *Resolver) offsetServed(pg offsetPage) error {
	if pg.offset > 0 && !r.Banking.Offers(banking.OffsetPaging) {
		return gqlerr.BadInput("after", "paging past the first page is not available: the upstream serves only the first page (strict mode)")
	}
	return nil
}

func orDefault[T ~string](v *T, def string) string {
	if v == nil {
		return def
	}
	return string(*v)
}
