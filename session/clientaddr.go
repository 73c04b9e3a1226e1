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
	for _, line := range r.Header.Values("Forwarded") {
		for _, elem := range strings.Split(line, ",") {
			for _, pair := range strings.Split(elem, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && strings.EqualFold(k, "proto") {
					last = strings.Trim(v, `"`)
				}
			}
		}
	}
	if last == "" {
		for _, line := range r.Header.Values("X-Forwarded-Proto") {
			for _, p := range strings.Split(line, ",") {
				if p = strings.TrimSpace(p); p != "" {
					last = p
				}
			}
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
	var out []string
	if fw := h.Values("Forwarded"); len(fw) > 0 {
		for _, line := range fw {
			for _, elem := range strings.Split(line, ",") {
				for _, pair := range strings.Split(elem, ";") {
					k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if ok && strings.EqualFold(k, "for") {
						out = append(out, hostOnly(strings.Trim(v, `"`)))
					}
				}
			}
		}
		return out
	}
	for _, line := range h.Values("X-Forwarded-For") {
		for _, a := range strings.Split(line, ",") {
			if a = strings.TrimSpace(a); a != "" {
				out = append(out, hostOnly(a))
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
