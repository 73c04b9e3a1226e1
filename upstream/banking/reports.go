package banking

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// ReportsService requests statements and fee reports. Each answers the URL
// of a file (report_path) that the caller downloads.
type ReportsService service

// StatementOptions are the parameters of a statement. From and To are
// days (YYYY-MM-DD); the To day is included. Timezone is a tz database
// name (UTC when empty). CorporationID is required for staff and API
// clients and ignored for persons.
type StatementOptions struct {
	From, To      string
	Timezone      string
	CorporationID string
}

func (o *StatementOptions) values() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	for k, v := range map[string]string{"from": o.From, "to": o.To, "timezone": o.Timezone, "corporationId": o.CorporationID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

type reportPath struct {
	ReportPath string `json:"report_path"`
}

// StatementPDF requests the PDF statement of exactly one wallet (GET
// /reports/statement/pdf) and answers the file's URL.
func (s *ReportsService) StatementPDF(ctx context.Context, walletID string, opts *StatementOptions) (string, error) {
	q := opts.values()
	q.Set("walletId", walletID)
	out, err := call[reportPath](ctx, s.client, http.MethodGet, "reports/statement/pdf?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	return out.ReportPath, nil
}

// StatementCSV requests the CSV statement of several wallets (GET
// /reports/statement/csv, wallets[] repeated) and answers the file's URL.
func (s *ReportsService) StatementCSV(ctx context.Context, walletIDs []string, opts *StatementOptions) (string, error) {
	q := opts.values()
	for _, id := range walletIDs {
		q.Add("wallets[]", id)
	}
	out, err := call[reportPath](ctx, s.client, http.MethodGet, "reports/statement/csv?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	return out.ReportPath, nil
}

// IntroducerFee requests the introducer's corporate fee report for the
// days from..to (both included); corporationIDs empty means all the
// introducer's corporations.
func (s *ReportsService) IntroducerFee(ctx context.Context, introducerID string, from, to time.Time, corporationIDs []string) (string, error) {
	q := url.Values{"introducerId": {introducerID}, "from": {from.Format("2006-01-02")}, "to": {to.Format("2006-01-02")}}
	for _, id := range corporationIDs {
		q.Add("corporationIds[]", id)
	}
	out, err := call[reportPath](ctx, s.client, http.MethodGet, "reports/introducers-corporates-fee?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	return out.ReportPath, nil
}

// OpenReport starts the download of a report file at reportURL, a
// report_path the upstream answered. The URL must be on the upstream's own
// host, so a report path can never point the gateway elsewhere. The file URL
// is a capability and takes no access token. The caller closes the body.
func (c *Client) OpenReport(ctx context.Context, reportURL string) (*http.Response, error) {
	u, err := url.Parse(reportURL)
	if err != nil {
		return nil, fmt.Errorf("banking: report path: %w", err)
	}
	base, _ := url.Parse(c.baseURL)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return nil, fmt.Errorf("banking: report path is not on the upstream's host")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		return nil, CheckResponse(resp)
	}
	return resp, nil
}
