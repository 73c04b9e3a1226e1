package payments_test

import (
	"encoding/json"
	"os"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// BenchmarkDecodeOrderListing decodes the sandbox's seeded order listing
// (13 orders, 5 KB, card tokens taken out; testdata/order-listing.json),
// the largest answer of the README query: with encoding/json, with the
// clients' decoder (roundtrip.Unmarshal), and with v2's exact name matching,
// which shows what the case-insensitive matching the clients keep costs.
//
//	go test -run '^$' -bench DecodeOrderListing ./upstream/payments
func BenchmarkDecodeOrderListing(b *testing.B) {
	raw, err := os.ReadFile("testdata/order-listing.json")
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func([]byte, any) error{
		"encoding-json": json.Unmarshal,
		"roundtrip":     roundtrip.Unmarshal,
		"v2-exact": func(b []byte, v any) error {
			return jsonv2.Unmarshal(b, v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		},
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				var out []payments.Order
				if err := decode(raw, &out); err != nil || len(out) != 13 {
					b.Fatal(err, len(out))
				}
			}
		})
	}
}
