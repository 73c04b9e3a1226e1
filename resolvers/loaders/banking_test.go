package loaders

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fingraph/fingraph/upstream/banking"
)

// fakeListing answers pages of n records named r0, r1, ... the way the
// banking upstream pages (meta[limit], meta[offset]), and counts the pages
// it served.
type fakeListing struct {
	n     int
	calls atomic.Int32
	fail  int // offset whose page fails; -1 for none
}

func (f *fakeListing) page(_ context.Context, o *banking.ListOptions) (*banking.Page[string], error) {
	f.calls.Add(1)
	if o.Offset == f.fail {
		return nil, errors.New("page failed")
	}
	var out []string
	for i := o.Offset; i < min(o.Offset+o.Limit, f.n); i++ {
		out = append(out, fmt.Sprint("r", i))
	}
	return &banking.Page[string]{List: out, Meta: banking.Meta{NumberOfRecords: f.n, Limit: o.Limit, HasMore: o.Offset+o.Limit < f.n}}, nil
}

func TestListAllReadsEveryPageUpToTheCap(t *testing.T) {
	for _, tc := range []struct{ n, want, calls int }{
		{0, 0, 1},
		{100, 100, 1},
		{101, 101, 2},
		{250, 250, 3},
		{MaxListed + 1234, MaxListed, MaxListed / pageSize},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			f := &fakeListing{n: tc.n, fail: -1}
			got, err := listAll(t.Context(), f.page, func(s string) string { return s })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want || int(f.calls.Load()) != tc.calls {
				t.Fatalf("%d records in %d pages; want %d in %d", len(got), f.calls.Load(), tc.want, tc.calls)
			}
			for i, r := range got {
				if r != fmt.Sprint("r", i) {
					t.Fatalf("record %d is %s: pages out of order", i, r)
				}
			}
		})
	}
}

func TestListAllTrustsNoCountBelowTheFirstPage(t *testing.T) {
	list := func(context.Context, *banking.ListOptions) (*banking.Page[string], error) {
		return &banking.Page[string]{List: []string{"a"}, Meta: banking.Meta{HasMore: true}}, nil
	}
	got, err := listAll(t.Context(), list, func(s string) string { return s })
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestListAllFailsWithAnyPage(t *testing.T) {
	f := &fakeListing{n: 350, fail: 200}
	if _, err := listAll(t.Context(), f.page, func(s string) string { return s }); err == nil {
		t.Fatal("a failed page must fail the listing, not shorten it")
	}
}
