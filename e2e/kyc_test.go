package e2e

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/fingraph/fingraph/resolvers"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// KYC documents through the GraphQL multipart request spec: a real
// mime/multipart client, the gateway's content check, the stream to the
// sandbox, and what is left behind after a refusal (nothing).

const uploadMutation = `mutation($input: UploadKycDocumentInput!) { uploadKycDocument(input: $input) { id name status type corporationId } }`

// upload sends one operation with one file per the GraphQL multipart
// request spec: operations (the file variable null), map, then the file.
func (g *testGateway) upload(t *testing.T, h http.Header, query string, vars map[string]any, filePath, filename string, data []byte) (gqlResponse, *http.Response) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	_ = mw.WriteField("operations", string(ops))
	m, _ := json.Marshal(map[string][]string{"0": {filePath}})
	_ = mw.WriteField("map", string(m))
	fw, _ := mw.CreateFormFile("0", filename)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if g.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+g.bearer)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("multipart POST: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out gqlResponse
	_ = json.Unmarshal(raw, &out)
	return out, resp
}

func (g *testGateway) uploadKYC(t *testing.T, filename string, data []byte) gqlResponse {
	t.Helper()
	r, _ := g.upload(t, nil, uploadMutation, map[string]any{"input": map[string]any{"file": nil}}, "variables.input.file", filename, data)
	return r
}

// kycStore is what the sandbox holds: documents and their bytes.
func (g *testGateway) kycStore(t *testing.T) (count, size int) {
	t.Helper()
	var v struct{ Count, Bytes int }
	g.sandbox(t, http.MethodGet, "/_sandbox/kyc-documents", nil, &v)
	return v.Count, v.Bytes
}

// compoundFile builds a minimal OLE2 file with one stream in its directory.
func compoundFile(stream string) []byte {
	b := make([]byte, 512*3)
	copy(b, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
	le := binary.LittleEndian
	le.PutUint16(b[0x18:], 0x3E)
	le.PutUint16(b[0x1A:], 3)
	le.PutUint16(b[0x1C:], 0xFFFE)
	le.PutUint16(b[0x1E:], 9)
	le.PutUint16(b[0x20:], 6)
	le.PutUint32(b[0x2C:], 1)
	le.PutUint32(b[0x30:], 1)
	le.PutUint32(b[0x38:], 4096)
	le.PutUint32(b[0x3C:], 0xFFFFFFFE)
	le.PutUint32(b[0x44:], 0xFFFFFFFE)
	le.PutUint32(b[0x4C:], 0)
	for i := 0x50; i < 512; i += 4 {
		le.PutUint32(b[i:], 0xFFFFFFFF)
	}
	fat := b[512:1024]
	for i := 0; i < 512; i += 4 {
		le.PutUint32(fat[i:], 0xFFFFFFFF)
	}
	le.PutUint32(fat[0:], 0xFFFFFFFD)
	le.PutUint32(fat[4:], 0xFFFFFFFE)
	dir := b[1024:]
	for i, e := range []struct {
		name string
		typ  byte
	}{{"Root Entry", 5}, {stream, 2}} {
		d := dir[i*128:]
		u := utf16.Encode([]rune(e.name))
		for j, c := range u {
			le.PutUint16(d[j*2:], c)
		}
		le.PutUint16(d[0x40:], uint16(len(u)*2+2))
		d[0x42] = e.typ
	}
	return b
}

func zipPackage(parts ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range append([]string{"[Content_Types].xml"}, parts...) {
		w, _ := zw.Create(p)
		_, _ = w.Write([]byte("<x/>"))
	}
	_ = zw.Close()
	return buf.Bytes()
}

func TestKYCUploadsEachAcceptedFormat(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	files := map[string][]byte{
		"passport.jpg":  append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{7}, 1000)...),
		"id-card.png":   append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 1000)...),
		"statutes.pdf":  []byte("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n"),
		"minutes.doc":   compoundFile("WordDocument"),
		"ledger.xls":    compoundFile("Workbook"),
		"minutes.docx":  zipPackage("word/document.xml"),
		"ledger.xlsx":   zipPackage("xl/workbook.xml"),
		"scan.JPG.docx": zipPackage("word/document.xml"),
	}
	n0, _ := g.kycStore(t)
	for name, data := range files {
		g.resetStats(t)
		var d struct {
			Doc struct {
				ID, Name, Status, Type, CorporationID string
			} `json:"uploadKycDocument"`
		}
		anna.uploadKYC(t, name, data).decode(t, &d)
		if d.Doc.ID == "" || d.Doc.Name != name || d.Doc.Status != "NO_MARK" || d.Doc.Type != "corporate" || rawID(d.Doc.CorporationID) != bankingsim.DemoCorporationID {
			t.Errorf("%s: %+v", name, d.Doc)
		}
		if c := g.stats(t).Routes["POST /banking/v2/corporations/{id}/kyc-documents"]; c != 1 {
			t.Errorf("%s: %d upstream uploads", name, c)
		}
	}
	n1, _ := g.kycStore(t)
	if n1 != n0+len(files) {
		t.Fatalf("sandbox holds %d documents, want %d", n1, n0+len(files))
	}
	var d struct {
		CurrentCorporation struct {
			KycDocuments []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"kycDocuments"`
		} `json:"currentCorporation"`
	}
	anna.query(t, `{ currentCorporation { kycDocuments { name status } } }`, nil).decode(t, &d)
	if got := len(d.CurrentCorporation.KycDocuments); got != len(files)+1 { // and the demo's
		t.Fatalf("kycDocuments lists %d", got)
	}
}

// TestKYCRefusedFilesLeaveNothingBehind: a renamed executable, a zip that
// is no Office document, and a file over the limit are refused with
// BAD_USER_INPUT before any upstream call; neither the sandbox nor the
// gateway's temporary directory keeps anything.
func TestKYCRefusedFilesLeaveNothingBehind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // gqlgen spools large uploads to os.TempDir()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00"), bytes.Repeat([]byte{0x90}, 4096)...)
	bigExe := append([]byte("MZ\x90\x00"), bytes.Repeat([]byte{0x90}, 3<<20)...) // spooled to a temp file
	oversized := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{' '}, resolvers.MaxKYCFileBytes)...)
	n0, b0 := g.kycStore(t)
	for name, c := range map[string]struct {
		filename string
		data     []byte
	}{
		"renamed executable":       {"annual-report.pdf", exe},
		"large renamed executable": {"scan.png", bigExe},
		"jar as docx":              {"contract.docx", zipPackage("META-INF/MANIFEST.MF")},
		"presentation as doc":      {"deck.doc", compoundFile("PowerPoint Document")},
		"oversized pdf":            {"huge.pdf", oversized},
		"empty file":               {"empty.pdf", nil},
	} {
		t.Run(name, func(t *testing.T) {
			g.resetStats(t)
			r := anna.uploadKYC(t, c.filename, c.data)
			code, field := errField(r)
			if code != "BAD_USER_INPUT" || field != "input.file" {
				t.Fatalf("got %s %q: %+v", code, field, r.Errors)
			}
			if st := g.stats(t); bankingCalls(st) != 0 {
				t.Errorf("a refused file reached the upstream: %v", st.Routes)
			}
		})
	}
	// Over the multipart transport's own bound: cut off while reading.
	r, resp := anna.upload(t, nil, uploadMutation, map[string]any{"input": map[string]any{"file": nil}}, "variables.input.file",
		"huge.pdf", append([]byte("%PDF-1.7\n"), make([]byte, 12<<20)...))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || r.code() != "BAD_USER_INPUT" {
		t.Fatalf("a 12 MiB request: %d %s %+v", resp.StatusCode, r.Data, r.Errors)
	}
	if n1, b1 := g.kycStore(t); n1 != n0 || b1 != b0 {
		t.Fatalf("the sandbox kept something: %d docs/%d bytes, was %d/%d", n1, b1, n0, b0)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "*"))
	var files []string
	for _, f := range left {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			files = append(files, f)
		}
	}
	if len(files) > 0 {
		t.Fatalf("temporary files left behind: %v", files)
	}
}

// TestKYCStatusAndDeleteThroughTheGraph: a person renames, staff verify; a
// status change is a gateway event; delete removes.
func TestKYCStatusAndDeleteThroughTheGraph(t *testing.T) {
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.as(g.signInStaff(t))
	ws := staff.dialWS(t, nil, nil)
	ws.subscribeFromNow(staff, "1", `subscription($after: String) { events(names: ["KycDocumentStatusChanged"], after: $after) `+liveFields+` }`, nil)

	var up struct {
		Doc struct{ ID string } `json:"uploadKycDocument"`
	}
	anna.uploadKYC(t, "statutes.pdf", []byte("%PDF-1.7\n%%EOF\n")).decode(t, &up)
	id := up.Doc.ID

	// That a person may not verify, and staff must name the corporation,
	// is the gateway's to say before the upstream: resolvers/kyc_resolvers_test.go.
	const update = `mutation($input: UpdateKycDocumentInput!) { updateKycDocument(input: $input) { id name status expiresAt } }`
	var u struct {
		Doc struct {
			Name, Status string
			ExpiresAt    *string
		} `json:"updateKycDocument"`
	}
	anna.query(t, update, map[string]any{"input": map[string]any{"id": id, "name": "statutes-2025.pdf", "expiresAt": "2030-06-30"}}).decode(t, &u)
	if u.Doc.Name != "statutes-2025.pdf" || u.Doc.ExpiresAt == nil || *u.Doc.ExpiresAt != "2030-06-30" || u.Doc.Status != "NO_MARK" {
		t.Fatalf("person update: %+v", u.Doc)
	}
	for _, st := range []string{"VERIFIED", "NOT_VERIFIED", "NO_MARK"} {
		staff.query(t, update, map[string]any{"input": map[string]any{"id": id, "corporationId": bankingsim.DemoCorporationID, "status": st}}).decode(t, &u)
		if u.Doc.Status != st {
			t.Fatalf("staff set %s, got %+v", st, u.Doc)
		}
		e := ws.next("1", "events")
		if e.Event.Payload["document_id"] != rawID(id) || e.Event.Payload["corporation_id"] != bankingsim.DemoCorporationID || e.Source != "gateway" {
			t.Fatalf("event of %s: %+v", st, e)
		}
	}
	// Ben's corporation has no such document.
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	const del = `mutation($input: DeleteKycDocumentInput!) { deleteKycDocument(input: $input) { id } }`
	if r := ben.query(t, del, map[string]any{"input": map[string]any{"id": id}}); r.code() != "NOT_FOUND" {
		t.Fatalf("ben deleting anna's document: %+v", r.Errors)
	}
	var dd struct {
		Del struct{ ID string } `json:"deleteKycDocument"`
	}
	anna.query(t, del, map[string]any{"input": map[string]any{"id": id}}).decode(t, &dd)
	if dd.Del.ID != id {
		t.Fatalf("delete: %+v", dd)
	}
	if r := anna.query(t, del, map[string]any{"input": map[string]any{"id": id}}); r.code() != "NOT_FOUND" {
		t.Fatalf("second delete: %+v", r.Errors)
	}
}

// TestKYCUploadFromACookieSessionNeedsCSRF: a multipart request is a
// mutation like any other; with the session cookie it needs the CSRF token.
func TestKYCUploadFromACookieSessionNeedsCSRF(t *testing.T) {
	g := startGateway(t)
	r, _ := g.signIn(t, map[string]any{"kind": "PERSON", "email": "anna@demo.test", "password": demoPassword, "deviceFingerprint": demoFingerprnt})
	cookie := http.Header{"Cookie": {"fingraph_session=" + r.SessionToken}}
	vars := map[string]any{"input": map[string]any{"file": nil}}
	pdf := []byte("%PDF-1.7\n%%EOF\n")
	n0, _ := g.kycStore(t)
	out, resp := g.upload(t, cookie, uploadMutation, vars, "variables.input.file", "a.pdf", pdf)
	if resp.StatusCode != http.StatusForbidden || out.code() != "FORBIDDEN" {
		t.Fatalf("cookie upload without CSRF: %d %+v", resp.StatusCode, out.Errors)
	}
	if n1, _ := g.kycStore(t); n1 != n0 {
		t.Fatal("a refused cross-site upload was stored")
	}
	cookie.Set("X-CSRF-Token", r.CSRFToken)
	out, resp = g.upload(t, cookie, uploadMutation, vars, "variables.input.file", "a.pdf", pdf)
	if resp.StatusCode != http.StatusOK || len(out.Errors) > 0 || !strings.Contains(string(out.Data), "NO_MARK") {
		t.Fatalf("cookie upload with CSRF: %d %s %+v", resp.StatusCode, out.Data, out.Errors)
	}
}

// TestCardAndKYCEventsStayInTheirCorporation: the demo corporation's card
// and KYC events never reach a person of another corporation, whose first
// event is the one of its own corporation that came after them.
func TestCardAndKYCEventsStayInTheirCorporation(t *testing.T) {
	// Subscriptions need a payments operator; persons become operators here.
	g := startGateway(t, "-payments-operators", "STAFF,PERSON,API_CLIENT")
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ben := g.as(g.signInPerson(t, "ben@second.test"))
	staff := g.as(g.signInStaff(t))
	ws := ben.dialWS(t, nil, nil)
	ws.subscribeFromNow(ben, "1", `subscription($after: String) { events(names: ["CardIssued", "CardTransactionSimulated", "KycDocumentStatusChanged"], after: $after) `+liveFields+` }`, nil)

	const update = `mutation($input: UpdateKycDocumentInput!) { updateKycDocument(input: $input) { id status } }`
	card := anna.issueCard(t, issueInput())
	anna.simulate(t, card.ID, 100)
	staff.query(t, update, map[string]any{"input": map[string]any{"id": bankingsim.DemoKYCID,
		"corporationId": bankingsim.DemoCorporationID, "status": "NOT_VERIFIED"}}).decode(t, &map[string]any{})

	var up struct {
		Doc struct{ ID string } `json:"uploadKycDocument"`
	}
	ben.uploadKYC(t, "register.pdf", []byte("%PDF-1.7\n%%EOF\n")).decode(t, &up)
	staff.query(t, update, map[string]any{"input": map[string]any{"id": up.Doc.ID,
		"corporationId": bankingsim.SecondCorporationID, "status": "VERIFIED"}}).decode(t, &map[string]any{})

	e := ws.next("1", "events")
	if e.Event.Name != "KycDocumentStatusChanged" || e.Event.Payload["document_id"] != rawID(up.Doc.ID) ||
		e.Event.Payload["corporation_id"] != bankingsim.SecondCorporationID {
		t.Fatalf("ben's first event is not his corporation's: %+v", e)
	}
}
