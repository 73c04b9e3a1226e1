package payments

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// FuzzResponseDecoders feeds arbitrary upstream answers to the payments
// client's decoders: error bodies through CheckResponse, and the types with
// their own UnmarshalJSON (order items as a number, an object or an array;
// the order's customer as an id or contact data; order tokens).
// Run: go test -run '^$' -fuzz FuzzResponseDecoders -fuzztime 60s ./upstream/payments
func FuzzResponseDecoders(f *testing.F) {
	for _, s := range []string{
		`{"error":{"code":"validation_error","message":"bad","field":"email"}}`,
		`{"id":"o1","items":3,"customer":"c1","amount":100,"currency":"EUR"}`,
		`{"id":"o1","items":[{"amount":1}],"customer":{"name":"A","email":"a@b"}}`,
		`{"id":"c1","tokens":["t1","t2"]}`, `[]`, `null`, `{"items":"x"}`,
	} {
		f.Add(422, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 500
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)),
			Request: &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/v1/order"}}}
		_ = CheckResponse(resp)
		for _, v := range []any{new(Order), new(Customer), new(Event), new(Items), new(OrderCustomer), new(OrderTokens)} {
			_ = json.Unmarshal(body, v)
		}
	})
}
