package e2e

import (
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"
)

// Statements and reports: requested through the graph, downloaded through
// the gateway's signed link by the session that asked, opened by a PDF
// parser and read as CSV.

const statementMutation = `mutation($input: RequestStatementInput!) { requestStatement(input: $input) { url fileName expiresAt } }`

type reportFile struct {
	URL       string `json:"url"`
	FileName  string `json:"fileName"`
	ExpiresAt string `json:"expiresAt"`
}

func (g *testGateway) requestStatement(t *testing.T, input map[string]any) (reportFile, gqlResponse) {
	t.Helper()
	r := g.query(t, statementMutation, map[string]any{"input": input})
	var d struct {
		RequestStatement reportFile `json:"requestStatement"`
	}
	if len(r.Errors) == 0 {
		r.decode(t, &d)
	}
	return d.RequestStatement, r
}

// download GETs a gateway path with g's session token, if any.
func (g *testGateway) download(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.URL+path, nil)
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestStatementPDFThroughTheSignedLink(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	f, r := anna.requestStatement(t, map[string]any{"format": "PDF", "walletIds": []string{demoEURWalletID},
		"from": "2024-01-01", "to": "2024-03-31", "timezone": "Europe/Riga"})
	if len(r.Errors) > 0 {
		t.Fatalf("requestStatement: %+v", r.Errors)
	}
	if !strings.HasPrefix(f.URL, "/downloads/reports/") || !strings.HasSuffix(f.FileName, ".pdf") || f.ExpiresAt == "" {
		t.Fatalf("report file = %+v", f)
	}
	if strings.Contains(f.URL, g.SandboxURL[len("http://"):]) {
		t.Fatalf("the link reveals the upstream's address: %s", f.URL)
	}
	resp, body := anna.download(t, f.URL)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("download: %d %v", resp.StatusCode, resp.Header)
	}
	if !strings.Contains(resp.Header.Get("Content-Disposition"), f.FileName) {
		t.Errorf("Content-Disposition = %q", resp.Header.Get("Content-Disposition"))
	}
	doc, err := pdf.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("the statement is not a PDF a parser opens: %v", err)
	}
	if doc.NumPage() < 1 {
		t.Fatal("the statement has no page")
	}
	tr, err := doc.GetPlainText()
	if err != nil {
		t.Fatalf("text: %v", err)
	}
	text, _ := io.ReadAll(tr)
	for _, want := range []string{"Statement", "Operating EUR", "Opening balance: 0.00 EUR", "Closing balance: 15,000.00 EUR", "Conversion from USD", "Office rent January", "Europe/Riga"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("statement text lacks %q:\n%s", want, text)
		}
	}

	// Neither the link nor the upstream's capability path reaches a log.
	sig := f.URL[strings.Index(f.URL, "sig=")+4:]
	for _, secret := range []string{sig, "rpt_", f.URL[len("/downloads/reports/"):strings.Index(f.URL, "?")]} {
		if strings.Contains(g.Logs.String(), secret) {
			t.Errorf("the logs hold part of a download link: %q", secret)
		}
	}

	// A tampered or foreign link downloads nothing.
	if resp, _ := anna.download(t, strings.Replace(f.URL, "sig=", "sig=x", 1)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered signature: %d", resp.StatusCode)
	}
	other := startGateway(t)
	if resp, _ := other.as(other.signInPerson(t, "anna@demo.test")).download(t, f.URL); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another gateway's key accepted the link: %d", resp.StatusCode)
	}

	// The input rules, checked before the upstream, and staff's required
	// corporationId: resolvers' TestStatementInputRules and
	// TestRequestStatement.
	staff := g.as(g.signInStaff(t))
	if _, r := staff.requestStatement(t, map[string]any{"format": "CSV", "walletIds": []string{demoEURWalletID}, "corporationId": demoCorpID}); len(r.Errors) > 0 {
		t.Errorf("staff with corporationId: %+v", r.Errors)
	}
	// A person's corporationId is ignored: the statement is of its own corporation.
	if _, r := anna.requestStatement(t, map[string]any{"format": "CSV", "walletIds": []string{secondEURWalletID}, "corporationId": secondCorpID}); r.code() != "NOT_FOUND" {
		t.Errorf("person asking for another corporation's wallet: %+v", r.Errors)
	}
}

// cents reads a CSV decimal such as -425.00.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, ok := strings.Cut(s, ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if !ok || len(frac) != 2 || err1 != nil || err2 != nil {
		t.Fatalf("not a decimal amount: %q", s)
	}
	v := w*100 + f
	if neg {
		v = -v
	}
	return v
}

func TestStatementCSVRowsSumToTheMovements(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))

	// Move money today, so the statement holds seeded and new movements.
	res, _ := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 10000, "currency": "EUR"})
	g.sandbox(t, http.MethodPost, "/_sandbox/banking/transactions/"+res.ID+"/settle", map[string]any{}, nil)

	f, r := anna.requestStatement(t, map[string]any{"format": "CSV", "walletIds": []string{demoEURWalletID, demoUSDWalletID}})
	if len(r.Errors) > 0 {
		t.Fatalf("requestStatement: %+v", r.Errors)
	}
	resp, body := anna.download(t, f.URL)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("download: %d %v", resp.StatusCode, resp.Header)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv: %v %q", err, body)
	}
	header := strings.Join(rows[0], ",")
	if header != "date,wallet_id,wallet_name,currency,transaction_id,type,description,amount,balance" {
		t.Fatalf("header = %s", header)
	}
	sums := map[string]int64{}
	last := map[string]int64{}
	for _, row := range rows[1:] {
		sums[row[1]] += cents(t, row[7])
		last[row[1]] = cents(t, row[8])
	}
	for _, id := range []string{demoEURWalletID, demoUSDWalletID} {
		bal, pending := anna.balance(t, demoCorpID, id)
		// Every movement since the wallet opened is in the statement, so
		// the rows add up to the balance; the pending wallet is empty now.
		if sums[id] != bal || last[id] != bal || pending != 0 {
			t.Errorf("wallet %s: rows sum to %d, last balance %d, wallet balance %d (pending %d)", id, sums[id], last[id], bal, pending)
		}
	}
	if sums[demoEURWalletID] != 1500000+10000 || sums[demoUSDWalletID] != 391460-10854 {
		t.Errorf("sums = %v", sums)
	}
}

func TestIntroducerFeeReport(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	intro := g.as(g.signInIntroducer(t))
	var d struct {
		R reportFile `json:"requestIntroducerFeeReport"`
	}
	const introducerID = "1e000000-0000-4000-8000-000000000001"
	intro.query(t, `mutation { requestIntroducerFeeReport(input: {introducerId: "`+introducerID+`", from: "2024-01-01", to: "2030-12-31"}) { url fileName expiresAt } }`, nil).decode(t, &d)
	res, body := intro.download(t, d.R.URL)
	if res.StatusCode != 200 {
		t.Fatalf("download: %d", res.StatusCode)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][0] != "corporation_id" || rows[1][0] != demoCorpID {
		t.Fatalf("fee report rows: %v %v", rows, err)
	}
	// The seeded conversion: a 5.40 USD charge, 5.00 EUR, of which 20 % is the introducer's.
	if got := strings.Join(rows[1][3:], ","); got != "1,5.00,1.00" {
		t.Errorf("fee report row = %v, want 1 transaction, 5.00 charges, 1.00 fee", rows[1])
	}
	if r := intro.query(t, `mutation { requestIntroducerFeeReport(input: {introducerId: "someone-else", from: "2024-01-01", to: "2024-12-31"}) { url } }`, nil); r.code() != "FORBIDDEN" {
		t.Errorf("introducer asking for another introducer: %+v", r.Errors)
	}
	// Persons and API clients are refused before the upstream: resolvers'
	// TestIntroducerFeeReport.
}
