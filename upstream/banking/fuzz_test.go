package banking

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// FuzzResponseDecoders feeds arbitrary upstream answers to the banking
// client's decoders: error bodies through CheckResponse, and the resource
// types with their own UnmarshalJSON (timestamps, pending wallets, phone
// changes, flags). Nothing an upstream sends may panic the gateway.
// Run: go test -run '^$' -fuzz FuzzResponseDecoders -fuzztime 60s ./upstream/banking
func FuzzResponseDecoders(f *testing.F) {
	for _, s := range []string{
		`{"errors":[{"field":"email","message":"bad","code":13}]}`,
		`{"id":"p1","first_name":"A","created_at":"2024-01-01T00:00:00.000Z","account":{"id":"c1"}}`,
		`{"id":"w1","amount":1050,"pending":{"id":"w2","amount":5},"created_at":1700000000}`,
		`{"id":"k1","status":"ACTIVE","expiry":{"year":"2030","month":"12"},"pan":{"bin":"555544","last_four":"1234"}}`,
		`true`, `{"removed":true}`, `[]`, `null`, `{"created_at":"not a time"}`,
	} {
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 500
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)),
			Request: &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/v2/persons"}}}
		_ = CheckResponse(resp)
		for _, v := range []any{new(Person), new(Corporation), new(Wallet), new(Card), new(Transaction),
			new(PhoneChangeResult), new(removedFlag), new(maybeSettings), new(Page[*Person])} {
			_ = json.Unmarshal(body, v)
		}
	})
}
