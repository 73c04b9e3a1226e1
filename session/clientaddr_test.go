package session

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientAddrTrustsOnlyConfiguredProxies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		header  http.Header
		want    string
	}{
		{"no proxies configured: the peer, whatever it forwards", nil, "10.1.2.3:5000", http.Header{"X-Forwarded-For": {"198.51.100.7"}}, "10.1.2.3"},
		{"an untrusted peer's header is ignored", proxies, "203.0.113.9:5000", http.Header{"X-Forwarded-For": {"198.51.100.7"}}, "203.0.113.9"},
		{"a trusted proxy names the client", proxies, "10.1.2.3:5000", http.Header{"X-Forwarded-For": {"198.51.100.7"}}, "198.51.100.7"},
		{"a client's own spoofed entries on the left are skipped", proxies, "10.1.2.3:5000", http.Header{"X-Forwarded-For": {"1.1.1.1, 198.51.100.7, 10.9.9.9"}}, "198.51.100.7"},
		{"several header lines", proxies, "10.1.2.3:5000", http.Header{"X-Forwarded-For": {"1.1.1.1", "198.51.100.8"}}, "198.51.100.8"},
		{"Forwarded wins, with ports and IPv6", proxies, "[::1]:5000", http.Header{"Forwarded": {`for="[2001:db8::5]:443";proto=https, for=10.2.2.2`}, "X-Forwarded-For": {"6.6.6.6"}}, "2001:db8::5"},
		{"only proxies: the left-most", proxies, "10.1.2.3:5000", http.Header{"X-Forwarded-For": {"10.5.5.5, 10.6.6.6"}}, "10.5.5.5"},
		{"a trusted proxy without a header", proxies, "10.1.2.3:5000", http.Header{}, "10.1.2.3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{TrustedProxies: tc.trusted}
			r := &http.Request{RemoteAddr: tc.remote, Header: tc.header}
			if got := h.ClientAddress(r); got != tc.want {
				t.Errorf("clientAddr = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestForwardedProtoTrustsOnlyConfiguredProxies(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		header  http.Header
		want    string
	}{
		{"no proxies configured", nil, http.Header{"X-Forwarded-Proto": {"https"}}, ""},
		{"X-Forwarded-Proto, nearest last", proxies, http.Header{"X-Forwarded-Proto": {"http, HTTPS"}}, "https"},
		{"Forwarded's proto wins", proxies, http.Header{"Forwarded": {`for=1.1.1.1;proto=http, for=2.2.2.2;proto="https"`}, "X-Forwarded-Proto": {"http"}}, "https"},
		{"Forwarded without proto falls back", proxies, http.Header{"Forwarded": {"for=1.1.1.1"}, "X-Forwarded-Proto": {"https"}}, "https"},
		{"nothing said", proxies, http.Header{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{TrustedProxies: tc.trusted}
			r := &http.Request{RemoteAddr: "10.1.2.3:5000", Header: tc.header}
			if got := h.ForwardedProto(r); got != tc.want {
				t.Errorf("ForwardedProto = %q, want %q", got, tc.want)
			}
		})
	}
}
