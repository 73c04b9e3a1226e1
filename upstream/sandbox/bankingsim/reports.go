package bankingsim

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // statements honour any tz database name, whatever the host has

	"github.com/go-chi/chi/v5"
	"github.com/go-pdf/fpdf"
)

// ReportTTL is how long a report file stays downloadable.
const ReportTTL = time.Hour

// report is a generated file, served at its unguessable path.
type report struct {
	Name, ContentType string
	Data              []byte
	Expires           time.Time
}

// reportParams are the parsed statement parameters.
type reportParams struct {
	corp     *corporation
	from, to time.Time // [from, to) in loc; to is the day after the to parameter
	loc      *time.Location
	fromDay  string
	toDay    string
}

// statementParamsLocked reads from, to, timezone and corporationId. The to
// day is included: one day is added to it. corporationId is required for
// staff, introducers and API clients and ignored for persons, who get their
// own corporation.
func (s *Sim) statementParamsLocked(w http.ResponseWriter, r *http.Request, e *errs) (reportParams, bool) {
	q := r.URL.Query()
	pr := principalOf(r)
	var p reportParams
	tz := q.Get("timezone")
	if tz == "" {
		tz = "UTC"
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		e.invalid("timezone", "timezone must be a tz database name")
		loc = time.UTC
	}
	p.loc = loc
	day := func(k string) (time.Time, bool) {
		v := q.Get(k)
		if v == "" {
			return time.Time{}, false
		}
		t, err := time.ParseInLocation("2006-01-02", v, loc)
		if err != nil {
			e.invalid(k, k+" must be a date YYYY-MM-DD")
			return time.Time{}, false
		}
		return t, true
	}
	from, hasFrom := day("from")
	to, hasTo := day("to")
	if !hasFrom {
		from = time.Date(2000, 1, 1, 0, 0, 0, 0, loc)
	}
	if !hasTo {
		n := s.now().In(loc)
		to = time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	}
	if hasFrom && hasTo && from.After(to) {
		e.invalid("from", "from must not be after to")
	}
	p.from, p.to = from, to.AddDate(0, 0, 1)
	p.fromDay, p.toDay = from.Format("2006-01-02"), to.Format("2006-01-02")

	corpID := q.Get("corporationId")
	if pr.kind == kindPerson {
		corpID = pr.corpID
	} else if corpID == "" {
		e.required("corporationId")
	}
	if len(*e) > 0 {
		return p, false
	}
	c := s.corporations[corpID]
	if c == nil || !s.seesCorporation(pr, c) {
		notFound(w, "corporation")
		return p, false
	}
	p.corp = c
	return p, true
}

// reportWalletLocked finds a wallet of the report's corporation.
func (s *Sim) reportWalletLocked(c *corporation, id string) *wallet {
	wl := s.wallets[id]
	if wl == nil || wl.CorpID != c.ID {
		return nil
	}
	return wl
}

// storeReportLocked keeps a file and answers its absolute URL, on the host
// and version the request came in on. The path is a capability: whoever
// holds it may download the file until it expires, without a token.
func (s *Sim) storeReportLocked(r *http.Request, name, contentType string, data []byte) string {
	id := randomToken("rpt_")
	s.reports[id] = &report{Name: name, ContentType: contentType, Data: data, Expires: s.now().Add(ReportTTL)}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/banking/v" + itoa(versionOf(r)) + "/reports/files/" + id + "?name=" + url.QueryEscape(name)
}

func (s *Sim) getReportFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rp := s.reports[chi.URLParam(r, "file")]
	if rp != nil && s.now().After(rp.Expires) {
		delete(s.reports, chi.URLParam(r, "file"))
		rp = nil
	}
	s.mu.Unlock()
	if rp == nil {
		notFound(w, "report")
		return
	}
	w.Header().Set("Content-Type", rp.ContentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+rp.Name+`"`)
	w.Header().Set("Cache-Control", "private, no-store")
	_, _ = w.Write(rp.Data)
}

// movements returns a wallet's entries in [from, to) and its balance before
// from.
func (wl *wallet) movements(from, to time.Time) (opening int64, out []entry) {
	for _, e := range wl.ledger {
		switch {
		case e.At.Before(from):
			opening = e.Balance
		case e.At.Before(to):
			out = append(out, e)
		}
	}
	return opening, out
}

// money formats minor units as 1,234.56.
func money(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole := fmt.Sprintf("%d", v/100)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s%s.%02d", sign, b.String(), v%100)
}

// decimal formats minor units as 1234.56, for CSV.
func decimal(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// statementPDF builds the statement of exactly one wallet as a PDF.
func (s *Sim) statementPDF(w http.ResponseWriter, r *http.Request) {
	var e errs
	ids := r.URL.Query()["walletId"]
	switch {
	case len(ids) == 0 || ids[0] == "":
		e.required("walletId")
	case len(ids) > 1 || strings.Contains(ids[0], ","):
		e.invalid("walletId", "a PDF statement covers exactly one wallet")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	p, ok := s.statementParamsLocked(w, r, &e)
	if !ok {
		if len(e) > 0 {
			badRequest(w, e...)
		}
		return
	}
	wl := s.reportWalletLocked(p.corp, ids[0])
	if wl == nil {
		notFound(w, "wallet")
		return
	}
	if refuseNotOnboardedLocked(w, p.corp, "walletId") {
		return
	}
	data, err := s.statementPDFLocked(p, wl)
	if err != nil {
		s.log.Error("statement pdf", "err", err)
		writeErrors(w, http.StatusInternalServerError, fieldErr("", "cannot build the statement", 0))
		return
	}
	path := s.storeReportLocked(r, "statement-"+p.fromDay+"-"+p.toDay+".pdf", "application/pdf", data)
	writeJSON(w, http.StatusOK, map[string]any{"report_path": path})
}

func (s *Sim) statementPDFLocked(p reportParams, wl *wallet) ([]byte, error) {
	opening, moves := wl.movements(p.from, p.to)
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle("Statement", false)
	pdf.SetCreator("fingraph sandbox", false)
	// Fixed dates make the same statement the same file.
	pdf.SetCreationDate(seedBase)
	pdf.SetModificationDate(seedBase)
	pdf.AddPage()
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetFont("Helvetica", "B", 16)
	pdf.Cell(0, 10, "Statement")
	pdf.Ln(12)
	pdf.SetFont("Helvetica", "", 10)
	iban := ""
	for _, id := range wl.RequisiteIDs {
		if q := s.requisites[id]; q != nil {
			iban = q.Number
			break
		}
	}
	for _, line := range []string{
		"Corporation: " + p.corp.Name,
		"Wallet: " + wl.Name + " (" + wl.ID + ")",
		"Currency: " + wl.Currency,
		"IBAN: " + iban,
		"Period: " + p.fromDay + " to " + p.toDay + " (" + p.loc.String() + ")",
		"Opening balance: " + money(opening) + " " + wl.Currency,
	} {
		pdf.Cell(0, 6, tr(line))
		pdf.Ln(6)
	}
	pdf.Ln(4)
	pdf.SetFont("Helvetica", "B", 9)
	widths := []float64{32, 78, 30, 30}
	for i, h := range []string{"Date", "Description", "Amount", "Balance"} {
		pdf.CellFormat(widths[i], 7, h, "1", 0, "L", false, 0, "")
	}
	pdf.Ln(-1)
	pdf.SetFont("Helvetica", "", 9)
	closing := opening
	for _, m := range moves {
		desc := m.Description
		if len(desc) > 48 {
			desc = desc[:48]
		}
		cells := []string{m.At.In(p.loc).Format("2006-01-02 15:04"), tr(desc), money(m.Amount), money(m.Balance)}
		for i, c := range cells {
			align := "L"
			if i >= 2 {
				align = "R"
			}
			pdf.CellFormat(widths[i], 6, c, "1", 0, align, false, 0, "")
		}
		pdf.Ln(-1)
		closing = m.Balance
	}
	pdf.Ln(4)
	pdf.SetFont("Helvetica", "B", 10)
	pdf.Cell(0, 6, "Closing balance: "+money(closing)+" "+wl.Currency)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// statementCSV builds the statement of several wallets as CSV with a
// header row; amounts are decimal major units with two places.
func (s *Sim) statementCSV(w http.ResponseWriter, r *http.Request) {
	var e errs
	var ids []string
	q := r.URL.Query()
	for _, k := range []string{"wallets", "wallets[]"} {
		for _, v := range q[k] {
			for _, id := range strings.Split(v, ",") {
				if id = strings.TrimSpace(id); id != "" {
					ids = append(ids, id)
				}
			}
		}
	}
	if len(ids) == 0 {
		e.required("wallets")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	p, ok := s.statementParamsLocked(w, r, &e)
	if !ok {
		if len(e) > 0 {
			badRequest(w, e...)
		}
		return
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"date", "wallet_id", "wallet_name", "currency", "transaction_id", "type", "description", "amount", "balance"})
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		wl := s.reportWalletLocked(p.corp, id)
		if wl == nil {
			notFound(w, "wallet "+id)
			return
		}
		if refuseNotOnboardedLocked(w, p.corp, "wallets") {
			return
		}
		_, moves := wl.movements(p.from, p.to)
		for _, m := range moves {
			_ = cw.Write([]string{m.At.In(p.loc).Format(time.RFC3339), wl.ID, wl.Name, wl.Currency, m.TxID, m.Type,
				m.Description, decimal(m.Amount), decimal(m.Balance)})
		}
	}
	cw.Flush()
	path := s.storeReportLocked(r, "statement-"+p.fromDay+"-"+p.toDay+".csv", "text/csv; charset=utf-8", buf.Bytes())
	writeJSON(w, http.StatusOK, map[string]any{"report_path": path})
}

// IntroducerFeePermille is the introducer's share of the conversion charges
// of its corporations.
const IntroducerFeePermille = 200

// introducerFeeReport builds a CSV of the conversion charges of the
// introducer's corporations between from and to (both required, to
// included, UTC) and the introducer's share. Staff may ask for any
// introducer, an introducer for itself; others 403.
func (s *Sim) introducerFeeReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pr := principalOf(r)
	var e errs
	introID := q.Get("introducerId")
	if introID == "" {
		e.required("introducerId")
	}
	day := func(k string) time.Time {
		v := q.Get(k)
		if v == "" {
			e.required(k)
			return time.Time{}
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			e.invalid(k, k+" must be a date YYYY-MM-DD")
		}
		return t
	}
	from, to := day("from"), day("to")
	if len(e) == 0 && from.After(to) {
		e.invalid("from", "from must not be after to")
	}
	var corpIDs []string
	for _, k := range []string{"corporationIds", "corporationIds[]"} {
		for _, v := range q[k] {
			for _, id := range strings.Split(v, ",") {
				if id = strings.TrimSpace(id); id != "" {
					corpIDs = append(corpIDs, id)
				}
			}
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	switch {
	case pr.isStaff():
	case pr.kind == kindIntroducer && pr.id == introID:
	default:
		forbidden(w, "", "the fee report is for staff and the introducer itself")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleDueLocked()
	if s.introducers[introID] == nil {
		badRequest(w, fieldErr("introducerId", "introducer not found", CodeInvalid))
		return
	}
	var corps []*corporation
	if len(corpIDs) == 0 {
		for _, c := range s.corporations {
			if c.IntroducerID == introID {
				corps = append(corps, c)
			}
		}
	} else {
		for _, id := range corpIDs {
			c := s.corporations[id]
			if c == nil || c.IntroducerID != introID {
				badRequest(w, fieldErr("corporationIds", "corporation "+id+" is not introduced by this introducer", CodeInvalid))
				return
			}
			corps = append(corps, c)
		}
	}
	sort.Slice(corps, func(i, j int) bool { return corps[i].Name < corps[j].Name })
	end := to.AddDate(0, 0, 1)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"corporation_id", "corporation_name", "currency", "transactions", "charges", "introducer_fee"})
	for _, c := range corps {
		var n, charges int64
		for _, t := range s.transactions {
			if t.CorpID == c.ID && t.Type == "convert" && t.Code == StatusApproved &&
				!t.CreatedAt.Before(from) && t.CreatedAt.Before(end) {
				n++
				charges += convertMinor(t.Charge, t.SourceCurrency, "EUR")
			}
		}
		_ = cw.Write([]string{c.ID, c.Name, "EUR", fmt.Sprint(n), decimal(charges), decimal(charges * IntroducerFeePermille / 1000)})
	}
	cw.Flush()
	path := s.storeReportLocked(r, "introducer-fee-"+from.Format("2006-01-02")+"-"+to.Format("2006-01-02")+".csv",
		"text/csv; charset=utf-8", buf.Bytes())
	writeJSON(w, http.StatusOK, map[string]any{"report_path": path})
}
