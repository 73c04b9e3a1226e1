package session

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddress is the address rate limits are keyed on, inside the session
// middleware and outside it (the webhook intake's per-sender limit: behind a
// load balancer every sender's TCP peer is the balancer). The TCP peer is the
// client, unless the peer is one of the configured trusted proxies: then the
// client is the nearest address in X-Forwarded-For (or Forwarded) that is
// not a trusted proxy, read from the right, because everything to the left
// of the proxies' own entries is whatever the client chose to send.
func (h *Handler) ClientAddress(r *http.Request) string {
	peer := clientIP(r.RemoteAddr)
	if len(h.TrustedProxies) == 0 || !h.trusted(peer) {
		return peer
	}
	hops := forwardedFor(r.Header)
	for i := len(hops) - 1; i >= 0; i-- {
		if !h.trusted(hops[i]) {
			return hops[i]
		}
	}
	if len(hops) > 0 {
		return hops[0]
	}
	return peer
}

// ForwardedProto is the scheme the client used, as the nearest trusted
// proxy reports it (X-Forwarded-Proto, or Forwarded's proto), or "" when
// the request did not come through a trusted proxy or it said nothing.
func (h *Handler) ForwardedProto(r *http.Request) string {
	if len(h.TrustedProxies) == 0 || !h.trusted(clientIP(r.RemoteAddr)) {
		return ""
	}
	var last string
	if ps := forwardedParam(r.Header, "proto"); len(ps) > 0 {
		last = ps[len(ps)-1]
	}
	if last == "" {
		if ps := headerList(r.Header, "X-Forwarded-Proto"); len(ps) > 0 {
			last = ps[len(ps)-1]
		}
	}
	return strings.ToLower(last)
}

func (h *Handler) trusted(addr string) bool {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range h.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// forwardedFor lists the client addresses proxies recorded, nearest last:
// from the standard Forwarded header when present, else X-Forwarded-For.
// Entries that are not addresses (obfuscated identifiers, "unknown") are
// kept as they are: they are not trusted proxies either.
func forwardedFor(h http.Header) []string {
	var hops []string
	if len(h.Values("Forwarded")) > 0 {
		hops = forwardedParam(h, "for")
	} else {
		hops = headerList(h, "X-Forwarded-For")
	}
	for i, a := range hops {
		hops[i] = hostOnly(a)
	}
	return hops
}

// forwardedParam lists the values of the standard Forwarded header's
// parameter key (for, proto), unquoted, in the order the proxies added them.
func forwardedParam(h http.Header, key string) []string {
	var out []string
	for _, line := range h.Values("Forwarded") {
		for _, elem := range strings.Split(line, ",") {
			for _, pair := range strings.Split(elem, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && strings.EqualFold(k, key) {
					out = append(out, strings.Trim(v, `"`))
				}
			}
		}
	}
	return out
}

// headerList lists the non-empty comma-separated entries of every line of
// the header name (X-Forwarded-For, X-Forwarded-Proto).
func headerList(h http.Header, name string) []string {
	var out []string
	for _, line := range h.Values(name) {
		for _, a := range strings.Split(line, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

// hostOnly drops a port and IPv6 brackets: "[2001:db8::1]:443" ->
// "2001:db8::1", "192.0.2.1:80" -> "192.0.2.1".
func hostOnly(a string) string {
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return strings.Trim(a, "[]")
}
