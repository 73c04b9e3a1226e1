package resolvers

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/upstream/banking"
)

func TestPageRequestBoundsFirst(t *testing.T) {
	fp := listingFingerprint("persons", "CREATED_AT", "DESC")
	pg, err := pageRequest(nil, nil, fp)
	require.NoError(t, err)
	assert.Equal(t, offsetPage{limit: 20, fingerprint: fp}, pg, "20 from the start by default")

	pg, err = pageRequest(ptr[int64](100), ptr(""), fp)
	require.NoError(t, err)
	assert.Equal(t, 100, pg.limit)
	assert.Equal(t, &banking.ListOptions{SortBy: "createdAt", SortType: banking.SortDesc, Limit: 100},
		pg.options("createdAt", ptr(model.SortDirectionDesc)))

	for _, n := range []int64{0, -1, 101, 1 << 40} {
		_, err = pageRequest(ptr(n), nil, fp)
		wantBadInput(t, err, "first")
	}
}

func TestOffsetCursorsContinueTheirOwnListingOnly(t *testing.T) {
	fp := listingFingerprint("card-transactions", "card-1", "createdAt", "DESC")
	first, err := pageRequest(ptr[int64](3), nil, fp)
	require.NoError(t, err)
	cursors, info := first.cursors(3, banking.Meta{NumberOfRecords: 7, HasMore: true})
	require.Len(t, cursors, 3)
	assert.True(t, info.HasNextPage)
	assert.False(t, info.HasPreviousPage)
	assert.Equal(t, cursors[0], *info.StartCursor)
	assert.Equal(t, cursors[2], *info.EndCursor)
	assert.Len(t, map[string]bool{cursors[0]: true, cursors[1]: true, cursors[2]: true}, 3, "every edge has its own cursor")

	next, err := pageRequest(ptr[int64](3), info.EndCursor, fp)
	require.NoError(t, err)
	assert.Equal(t, 3, next.offset, "after the third edge comes offset 3")
	_, info = next.cursors(0, banking.Meta{NumberOfRecords: 3})
	assert.True(t, info.HasPreviousPage)
	assert.False(t, info.HasNextPage)
	assert.Nil(t, info.StartCursor, "an empty page has no cursors")
	assert.Nil(t, info.EndCursor)

	for name, other := range map[string]string{
		"other card":      listingFingerprint("card-transactions", "card-2", "createdAt", "DESC"),
		"other direction": listingFingerprint("card-transactions", "card-1", "createdAt", "ASC"),
		"other listing":   listingFingerprint("persons", "CREATED_AT", "DESC"),
	} {
		_, err := pageRequest(nil, info.EndCursor, other)
		if err == nil {
			_, err = pageRequest(nil, &cursors[2], other)
		}
		wantBadInput(t, err, "after")
		assert.Contains(t, err.Error(), "another listing", name)
	}
}

func TestMalformedCursorsAreBadInput(t *testing.T) {
	fp := listingFingerprint("persons", "CREATED_AT", "DESC")
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, c := range map[string]string{
		"not base64":       "%%%",
		"not json":         b64("seven"),
		"other version":    b64(`{"v":2,"o":1,"f":"` + fp + `"}`),
		"negative offset":  b64(`{"v":1,"o":-5,"f":"` + fp + `"}`),
		"huge offset":      b64(`{"v":1,"o":99999999999,"f":"` + fp + `"}`),
		"no fingerprint":   b64(`{"v":1,"o":1}`),
		"too long":         strings.Repeat("A", 500),
		"an event cursor":  "12.abcdef",
		"padded base64url": base64.URLEncoding.EncodeToString([]byte(`{"v":1,"o":1,"f":"`+fp+`"}`)) + "==",
	} {
		_, err := pageRequest(nil, &c, fp)
		wantBadInput(t, err, "after")
		assert.NotContains(t, err.Error(), "another listing", name)
	}
}

// FuzzOffsetCursor: whatever arrives as after is either refused as
// BAD_USER_INPUT on after, or continues this very listing at an offset in
// range; and every cursor the gateway hands out continues right after
// itself.
func FuzzOffsetCursor(f *testing.F) {
	fp := listingFingerprint("persons", "CREATED_AT", "DESC")
	f.Add(encodeOffsetCursor(0, fp), 0)
	f.Add(encodeOffsetCursor(41, fp), 41)
	f.Add(encodeOffsetCursor(3, "other"), 3)
	f.Add("eyJ2IjoxLCJvIjotMSwiZiI6IngifQ", 7)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, after string, offset int) {
		pg, err := pageRequest(nil, &after, fp)
		if err != nil {
			wantBadInput(t, err, "after")
		} else if after != "" && (pg.offset < 1 || pg.offset > maxCursorOffset+1) {
			t.Fatalf("cursor %q continues at offset %d", after, pg.offset)
		}
		if offset < 0 || offset > maxCursorOffset {
			return
		}
		c := encodeOffsetCursor(offset, fp)
		pg, err = pageRequest(nil, &c, fp)
		if err != nil || pg.offset != offset+1 {
			t.Fatalf("the cursor of offset %d continues at %d (%v)", offset, pg.offset, err)
		}
	})
}

// Every connection weighs its page: first times what one edge asks for,
// 20 when first is not given, and what the page asks for once (pageInfo,
// totalCount) once.
func TestConnectionsComplexityWeighsFirst(t *testing.T) {
	c := Complexity()
	const perPage = 6 // pageInfo { 4 fields } and totalCount
	for name, cost := range map[string]func(first *int64) int{
		"persons": func(f *int64) int { return c.Query.Persons(c.PersonConnection.Edges(9)+perPage, f, nil, nil, nil) },
		"corporations": func(f *int64) int {
			return c.Query.Corporations(c.CorporationConnection.Edges(9)+perPage, f, nil, nil, nil)
		},
		"transactions": func(f *int64) int {
			return c.Card.Transactions(c.CardTransactionConnection.Edges(9)+perPage, f, nil, nil)
		},
		"wallet transactions": func(f *int64) int {
			return c.Wallet.Transactions(c.WalletTransactionConnection.Edges(9)+perPage, f, nil, nil)
		},
		"eventHistory": func(f *int64) int {
			return c.Query.EventHistory(c.EventConnection.Edges(9)+perPage, f, nil, nil) - events.HistoryFixedReads(0)
		},
	} {
		assert.Equal(t, 1+100*10+perPage, cost(ptr[int64](100)), name)
		assert.Equal(t, 1+20*10+perPage, cost(nil), name)
	}
	// A selection whose cost saturates stays saturated, never wraps.
	assert.Equal(t, math.MaxInt, c.Card.Transactions(c.CardTransactionConnection.Edges(math.MaxInt), ptr[int64](100), nil, nil))
}

// TestEventHistoryComplexityCountsItsFixedReads: a page of events costs,
// besides its events, the fixed reads of its scope's subjects (one per
// banking-side source and name asked for, every name when none is), so
// that pages of one event are not nearly free.
func TestEventHistoryComplexityCountsItsFixedReads(t *testing.T) {
	c := Complexity()
	one := ptr[int64](1)
	edges := c.EventConnection.Edges(3) // cursor, node { id name }
	page := 1                           // pageInfo { hasNextPage }
	all := c.Query.EventHistory(edges+page, one, nil, nil)
	assert.Equal(t, 1+4+page+events.HistoryFixedReads(0), all)
	assert.Greater(t, events.HistoryFixedReads(0), 2*20, "every banking-side name, under the gateway's and the poller's source")
	two := c.Query.EventHistory(edges+page, one, nil, []string{"WalletCreated", "PersonUpdated"})
	assert.Equal(t, 1+4+page+1+2*2, two)
	assert.Greater(t, all, 20, "a page of one event reads more than it shows")
	assert.Equal(t, math.MaxInt, c.Query.EventHistory(math.MaxInt, one, nil, nil))
}
