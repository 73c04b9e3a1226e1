package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// checkUpstreams asks each configured upstream one harmless question before
// the gateway reports ready, so that a base URL that cannot be right (a
// typo, a web page, another service) is refused at start with one line
// naming the setting, instead of failing every request later. An upstream
// that is down for now is only a warning: it may come back, and the breaker
// and /readyz report it meanwhile.
//
//   - payments: GET /v1/webhooks with the access token answers a JSON list,
//     or a JSON error object ("error": {...}) when the token is refused;
//   - banking: a request below the lowest API version (GET /v1/...) answers
//     400 with the interface's error list ("errors": [...]) on every route,
//     without credentials.
func checkUpstreams(ctx context.Context, cfg Config, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	p := prober{client: client, logger: logger}
	if err := p.probe(ctx, cfg.PaymentsURL, "/v1/webhooks", cfg.PaymentsAccess, "error", "FINGRAPH_PAYMENTS_URL", "payments"); err != nil {
		return err
	}
	return p.probe(ctx, cfg.BankingURL, "/v1/lookup/ibans/is-sepa-enabled", "", "errors", "FINGRAPH_BANKING_URL", "banking")
}

type prober struct {
	client *http.Client
	logger *slog.Logger
}

// probe asks base+route; an answer in the interface's JSON shape (success,
// or an error object under errorKey) passes.
func (p prober) probe(ctx context.Context, base, route, bearer, errorKey, setting, name string) error {
	base = strings.TrimRight(base, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+route, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", setting, err)
	}
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := p.client.Do(req)
	if err != nil {
		var dns *net.DNSError
		if errors.As(err, &dns) && dns.IsNotFound {
			return fmt.Errorf("%s: the host %q does not exist", setting, req.URL.Hostname())
		}
		p.logger.Warn("the "+name+" upstream does not answer yet; the gateway starts, and reports it in /readyz until it does",
			"setting", setting, "url", redactURL(base), "err", err)
		return nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	var shape map[string]json.RawMessage
	isJSON := strings.HasSuffix(mt, "json")
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300 && isJSON && json.Valid(body):
		return nil
	case isJSON && json.Unmarshal(body, &shape) == nil && shape[errorKey] != nil:
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			if name == "payments" {
				return errors.New("FINGRAPH_PAYMENTS_ACCESS_TOKEN: the payments upstream refused the access token (GET " + route + " answered " + res.Status + ")")
			}
		}
		return nil
	}
	if mt == "" {
		mt = "no content type"
	}
	return fmt.Errorf("%s: %s does not answer as the %s interface (GET %s answered %s, %s); check the base URL",
		setting, redactURL(base), name, route, res.Status, mt)
}

// redactURL hides a password in a URL (nats://user:secret@host), or in
// each of a comma-separated list of them, for logs and errors.
func redactURL(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil {
			parts[i] = "(an unparsable URL)"
			continue
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}
