package roundtrip

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeOptions are the upstream answers' JSON rules. The decoder is
// encoding/json/v2's (github.com/go-json-experiment/json, the module the Go
// team develops it in, until Go ships it without GOEXPERIMENT): it decodes
// the gateway's largest answers (order and card listings) in less CPU and
// with fewer allocations than encoding/json (docs/performance.md, "Settings
// chosen by measurement").
//
// The rules are encoding/json's, so that switching decoders changed no
// answer: names match without regard to case (an exact match first), invalid
// UTF-8 becomes U+FFFD and a repeated name keeps its last value, so one odd
// byte or key cannot fail a whole listing.
var decodeOptions = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(true),
)

// Unmarshal decodes an upstream answer, or a part of one (or a webhook the
// upstream sent: paymentsfeed.Intake), into v. A client
// type with its own decoding implements UnmarshalJSONFrom (reading its parts
// with jsonv2.UnmarshalDecode, which keeps these options), or calls Unmarshal
// from UnmarshalJSON.
func Unmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v, decodeOptions) }
