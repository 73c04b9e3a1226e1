package relay_test

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/relay"
)

func rawID(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestRoundTripEveryKind(t *testing.T) {
	for _, k := range relay.Kinds() {
		raw := []string{"c1:x%", "id-2"}[2-k.Parts():]
		id := relay.ID(k, raw...)
		assert.NotContains(t, id, "=", "no padding")
		r, err := relay.Decode(id)
		require.NoError(t, err, k)
		assert.Equal(t, k, r.Kind)
		assert.Equal(t, raw, r.Parts)
		assert.True(t, r.Global)
		assert.Equal(t, "id-2", r.Upstream())
	}
}

func TestSameRawIDOfTwoUpstreamsDoNotCollide(t *testing.T) {
	assert.NotEqual(t, relay.ID(relay.Customer, "42"), relay.ID(relay.Person, "42"))
	assert.NotEqual(t, relay.ID(relay.Order, "42"), relay.ID(relay.Card, "42"))
}

func TestEscapedPartsCannotSplit(t *testing.T) {
	a := relay.ID(relay.Wallet, "a:b", "c")
	b := relay.ID(relay.Wallet, "a", "b:c")
	assert.NotEqual(t, a, b)
	r, err := relay.Decode(a)
	require.NoError(t, err)
	assert.Equal(t, []string{"a:b", "c"}, r.Parts)
}

func TestRefusedIDsAreNotFound(t *testing.T) {
	for name, id := range map[string]string{
		"empty":               "",
		"not base64":          "!!!",
		"padded":              rawID("Card:1") + "==",
		"random bytes":        base64.RawURLEncoding.EncodeToString([]byte{0xff, 0x00, 0x13, 0x37}),
		"unknown type":        rawID("Secret:1"),
		"no parts":            rawID("Card"),
		"empty part":          rawID("Card:"),
		"missing part":        rawID("Wallet:1"),
		"extra part":          rawID("Card:1:2"),
		"dot segment":         rawID("Card:.."),
		"dot inside":          rawID("Wallet:c:a/../b"),
		"control char":        rawID("Card:a\nb"),
		"bad escape":          rawID("Card:a%zz"),
		"non-canonical":       rawID("Card:%41"),
		"too long":            strings.Repeat("A", relay.MaxLen+1),
		"part too long":       rawID("Card:" + strings.Repeat("x", relay.MaxPart+1)),
		"standard alphabet":   base64.RawStdEncoding.EncodeToString([]byte("Card:\xfb\xff")),
		"lower-case typename": rawID("card:1"),
	} {
		_, err := relay.Decode(id)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, relay.ErrNotFound), name)
		e, ok := gqlerr.As(err)
		require.True(t, ok, name)
		assert.Equal(t, gqlerr.NotFound, e.Code, name)
	}
}

func TestArg(t *testing.T) {
	card := relay.ID(relay.Card, "card-1")

	r, err := relay.Arg(relay.Card, card)
	require.NoError(t, err)
	assert.Equal(t, "card-1", r.Upstream())
	assert.True(t, r.Global)

	// The compatibility rule: a raw upstream id is still taken.
	r, err = relay.Arg(relay.Card, "card-1")
	require.NoError(t, err)
	assert.Equal(t, "card-1", r.Upstream())
	assert.False(t, r.Global)
	assert.Empty(t, r.Parent())

	// A global id of the wrong type is NOT_FOUND, never read as a raw id.
	_, err = relay.Arg(relay.Person, card)
	assert.ErrorIs(t, err, relay.ErrNotFound)

	for _, bad := range []string{"", "..", "a/./b", "x\x00", strings.Repeat("x", relay.MaxPart+1)} {
		_, err = relay.Arg(relay.Card, bad)
		assert.ErrorIs(t, err, relay.ErrNotFound, "%q", bad)
	}

	id, err := relay.ArgID(relay.Limit, relay.ID(relay.Limit, "corp", "lim"))
	require.NoError(t, err)
	assert.Equal(t, "lim", id)
}

func TestIDPanicsOnWrongParts(t *testing.T) {
	assert.Panics(t, func() { relay.ID(relay.Wallet, "only-one") })
	assert.Panics(t, func() { relay.ID("Nope", "1") })
}

// FuzzIDRoundTrip makes ids from arbitrary parts: every part an upstream id
// could be comes back from Decode as it went in, whatever its characters
// (the escaping of ':' and '%' is what this exercises).
func FuzzIDRoundTrip(f *testing.F) {
	f.Add("corp", "wallet")
	f.Add("a:b", "%3A")
	f.Add("%", ":")
	f.Fuzz(func(t *testing.T, parent, own string) {
		id := relay.ID(relay.Wallet, parent, own)
		r, err := relay.Decode(id)
		if err != nil {
			// Only parts no upstream id can be are refused.
			if _, rawErr := relay.Arg(relay.Wallet, parent); rawErr == nil {
				if _, rawErr := relay.Arg(relay.Wallet, own); rawErr == nil && len(id) <= relay.MaxLen {
					t.Fatalf("id of valid parts %q, %q refused: %v", parent, own, err)
				}
			}
			return
		}
		if r.Kind != relay.Wallet || r.Parent() != parent || r.Upstream() != own {
			t.Fatalf("parts %q, %q came back as %v", parent, own, r)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(relay.ID(relay.Wallet, "c", "w"))
	f.Add("")
	f.Add(rawID("Card:%3A"))
	f.Fuzz(func(t *testing.T, id string) {
		r, err := relay.Decode(id)
		if err != nil {
			if !errors.Is(err, relay.ErrNotFound) {
				t.Fatalf("error %v is not ErrNotFound", err)
			}
			return
		}
		// Whatever decodes is canonical: encoding it again gives id.
		if got := relay.ID(r.Kind, r.Parts...); got != id {
			t.Fatalf("re-encoded %q as %q", id, got)
		}
	})
}

func BenchmarkID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = relay.ID(relay.Wallet, "c0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000001")
	}
}

func BenchmarkDecode(b *testing.B) {
	id := relay.ID(relay.Wallet, "c0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000001")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := relay.Decode(id); err != nil {
			b.Fatal(err)
		}
	}
}

// A global id costs one allocation, the string itself: the plain and the
// encoded forms are built on the stack (every node of a response gets one).
func TestIDAllocatesOnlyTheString(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		_ = relay.ID(relay.Wallet, "c0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000001")
	}); n != 1 {
		t.Errorf("relay.ID: %.0f allocations, want 1", n)
	}
	// Past the stack buffers (two parts of MaxPart), still a correct id.
	a, b := strings.Repeat("a", relay.MaxPart), strings.Repeat("b", relay.MaxPart)
	if ref, err := relay.Decode(relay.ID(relay.Wallet, a, b)); err != nil || !slices.Equal(ref.Parts, []string{a, b}) {
		t.Errorf("a long id does not round-trip: %+v, %v", ref, err)
	}
}
