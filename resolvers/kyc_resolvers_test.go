package resolvers

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

const uploadKYCMutation = `mutation($in: UploadKycDocumentInput!) {
  uploadKycDocument(input: $in) { id upstreamId name status type path corporationId }
}`

// kycUploaded is uploadKYCMutation's answer.
type kycUploaded struct {
	UploadKycDocument struct {
		ID, UpstreamID, Name, Status, Type, CorporationID, Path string
	}
}

// watchedFile is an upload's file that counts its reads.
type watchedFile struct {
	*bytes.Reader
	mu    sync.Mutex
	reads int
}

func (f *watchedFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	f.reads++
	f.mu.Unlock()
	return f.Reader.Read(p)
}

func (f *watchedFile) read() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads > 0
}

// upload is an uploadKycDocument input holding a file of data named name,
// declared (falsely) as HTML, edited by key-value pairs; the file is
// returned to watch its reads.
func upload(name string, data []byte, kv ...any) (map[string]any, *watchedFile) {
	f := &watchedFile{Reader: bytes.NewReader(data)}
	in := map[string]any{"file": graphql.Upload{File: f, Filename: name, Size: int64(len(data)), ContentType: "text/html"}}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"in": in}, f
}

// recordingKYC records what the resolvers send upstream: each upload's
// declared type and bytes as sent.
type recordingKYC struct {
	BankingKYC
	mu    sync.Mutex
	sent  []string
	bytes [][]byte
}

func (r *recordingKYC) Upload(ctx context.Context, corpID string, in *banking.KYCUpload) (*banking.KYCDocument, error) {
	data, err := io.ReadAll(in.File)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.sent = append(r.sent, corpID+" "+in.Filename+" "+in.ContentType+" "+in.Type)
	r.bytes = append(r.bytes, data)
	r.mu.Unlock()
	in.File = bytes.NewReader(data)
	return r.BankingKYC.Upload(ctx, corpID, in)
}

// recordUploads puts a recorder between the resolvers and the fake KYC
// service (before the first exec).
func recordUploads(h *harness) *recordingKYC {
	r := &recordingKYC{BankingKYC: h.r.Banking.KYC}
	h.r.Banking.KYC = r
	return r
}

var (
	kycPDFBytes  = []byte("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n")
	kycJPEGBytes = append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 64)...)
	kycPNGBytes  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
)

// Each accepted format is recognised by its content and sent whole, from
// its first byte, under the media type of what it is (never the type the
// client declared), for the caller's own corporation; the answer is the
// new document.
func TestUploadKycDocumentSendsWhatItRecognised(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := recordUploads(h)
	h.as(person)
	files := []struct {
		name string
		data []byte
		mime string
	}{
		{"passport.jpg", kycJPEGBytes, "image/jpeg"},
		{"id-card.png", kycPNGBytes, "image/png"},
		{"statutes.pdf", kycPDFBytes, "application/pdf"},
		{"minutes.doc", compound("WordDocument"), "application/msword"},
		{"ledger.xls", compound("Workbook"), "application/vnd.ms-excel"},
		{"minutes.docx", pkg("[Content_Types].xml", "word/document.xml"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"ledger.xlsx", pkg("[Content_Types].xml", "xl/workbook.xml"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"scan.JPG.docx", pkg("[Content_Types].xml", "word/document.xml"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"Ķekava – līgums.PDF", kycPDFBytes, "application/pdf"},
	}
	for i, f := range files {
		vars, _ := upload(f.name, f.data)
		var got kycUploaded
		h.execRaw(uploadKYCMutation, vars).decode(t, &got)
		d := got.UploadKycDocument
		if d.Name != f.name || d.Status != "NO_MARK" || d.Type != "corporate" || d.CorporationID != relay.ID(relay.Corporation, demoCorp) ||
			d.ID != relay.ID(relay.KycDocument, demoCorp, d.UpstreamID) || d.Path == "" {
			t.Fatalf("%s: answered %+v", f.name, d)
		}
		if want := demoCorp + " " + f.name + " " + f.mime + " corporate"; rec.sent[i] != want {
			t.Fatalf("sent %q, want %q", rec.sent[i], want)
		}
		if !bytes.Equal(rec.bytes[i], f.data) {
			t.Fatalf("%s: sent %d bytes that are not the file's %d", f.name, len(rec.bytes[i]), len(f.data))
		}
	}

	// Staff name the corporation, and upload there.
	vars, _ := upload("register.pdf", kycPDFBytes, "corporationId", relay.ID(relay.Corporation, otherCorp))
	var got kycUploaded
	h.as(staff).execRaw(uploadKYCMutation, vars).decode(t, &got)
	if got.UploadKycDocument.CorporationID != relay.ID(relay.Corporation, otherCorp) || !strings.HasPrefix(rec.sent[len(files)], otherCorp+" ") {
		t.Fatalf("staff's upload: %+v, sent %q", got.UploadKycDocument, rec.sent[len(files)])
	}
}

// A file the gateway does not accept (by its content, its size, or a name
// that disagrees with it or could mislead a reviewer) is BAD_USER_INPUT on
// input.file, and nothing is sent upstream.
func TestUploadKycDocumentRefusesBadFilesBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00"), bytes.Repeat([]byte{0x90}, 4096)...)
	polyglot := []byte("%PDF-1.7\n<html><script>alert(document.domain)</script></html>\n%%EOF\n")
	for _, tc := range []struct {
		name, filename string
		data           []byte
		size           int64
	}{
		{"renamed executable", "annual-report.pdf", exe, 0},
		{"jar as docx", "contract.docx", pkg("[Content_Types].xml", "META-INF/MANIFEST.MF"), 0},
		{"zip without content types", "contract.docx", pkg("word/document.xml"), 0},
		{"word and excel at once", "contract.docx", pkg("[Content_Types].xml", "word/a.xml", "xl/b.xml"), 0},
		{"presentation as doc", "deck.doc", compound("PowerPoint Document"), 0},
		{"over the limit", "huge.pdf", kycPDFBytes, MaxKYCFileBytes + 1},
		{"empty", "empty.pdf", nil, 0},
		{"dot dot", "..", kycPDFBytes, 0},
		{"dot", ".", kycPDFBytes, 0},
		{"no name", "", kycPDFBytes, 0},
		{"right-to-left override", "invoice\u202Efdp.exe", kycPDFBytes, 0},
		{"override hiding the type", "report\u202Elmth.pdf", polyglot, 0},
		{"isolate", "a\u2066b.pdf", kycPDFBytes, 0},
		{"zero width", "statutes\u200B.pdf", kycPDFBytes, 0},
		{"line separator", "a\u2028b.pdf", kycPDFBytes, 0},
		{"backslash", `..\..\statutes.pdf`, kycPDFBytes, 0},
		{"slash", "a/statutes.pdf", kycPDFBytes, 0},
		{"control character", "stat\tutes.pdf", kycPDFBytes, 0},
		{"not UTF-8", "stat\xffutes.pdf", kycPDFBytes, 0},
		{"too long", strings.Repeat("a", 300) + ".pdf", kycPDFBytes, 0},
		{"pdf/html polyglot", "report.html", polyglot, 0},
		{"pdf named png", "statutes.png", kycPDFBytes, 0},
		{"png named pdf", "statutes.pdf", kycPNGBytes, 0},
		{"no extension", "statutes", kycPDFBytes, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			vars, _ := upload(tc.filename, tc.data)
			if tc.size > 0 {
				u := vars["in"].(map[string]any)["file"].(graphql.Upload)
				u.Size = tc.size
				vars["in"].(map[string]any)["file"] = u
			}
			refused(t, h.as(person).execRaw(uploadKYCMutation, vars), "BAD_USER_INPUT", "input.file")
			h.noUpstreamCall(t, 0, "a refused file")
		})
	}
}

// Who may upload is settled before the file is read: introducers may not,
// persons and API clients upload for their own corporation only, staff
// must name one. A refused upload reads no byte of its file and makes no
// upstream call.
func TestUploadKycDocumentIsAuthorisedBeforeItsFileIsRead(t *testing.T) {
	t.Parallel()
	other := relay.ID(relay.Corporation, otherCorp)
	for _, tc := range []struct {
		name  string
		who   principal
		kv    []any
		code  string
		field string
	}{
		{"introducer", introducer, nil, "FORBIDDEN", ""},
		{"person for another corporation", person, []any{"corporationId", other}, "FORBIDDEN", ""},
		{"API client for another corporation", apiClient, []any{"corporationId", other}, "FORBIDDEN", ""},
		{"staff without a corporation", staff, nil, "BAD_USER_INPUT", "input.corporationId"},
		{"customer", customer, nil, "FORBIDDEN", ""},
		{"anonymous", anonymous, nil, "UNAUTHENTICATED", ""},
		{"blank key", person, []any{"idempotencyKey", " "}, "BAD_USER_INPUT", "input.idempotencyKey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			vars, f := upload("statutes.pdf", kycPDFBytes, tc.kv...)
			refused(t, h.as(tc.who).execRaw(uploadKYCMutation, vars), tc.code, tc.field)
			h.noUpstreamCall(t, 0, "a refused upload")
			if tc.code != "BAD_USER_INPUT" && f.read() {
				t.Fatal("a refused upload's file was read")
			}
		})
	}
}

// An upload under an idempotency key is one document: a retry answers it
// and sends nothing. An upload whose answer was lost is OUTCOME_UNKNOWN
// under a key (and stays so: the upstream keeps no reference to find it
// by, so no retry sends it again), and the upstream's own error without
// one.
func TestUploadKycDocumentWithAKeyUploadsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.as(person)
	var first, retry kycUploaded
	vars, _ := upload("keyed.pdf", kycPDFBytes, "idempotencyKey", "kyc-1")
	h.execRaw(uploadKYCMutation, vars).decode(t, &first)
	vars, _ = upload("keyed.pdf", kycPDFBytes, "idempotencyKey", "kyc-1")
	h.execRaw(uploadKYCMutation, vars).decode(t, &retry)
	if retry != first || h.banking.kyc.calls("Upload") != 1 {
		t.Fatalf("the retry answered %+v after %+v with %d uploads, want the first, uploaded once", retry, first, h.banking.kyc.calls("Upload"))
	}
	vars, _ = upload("other.pdf", kycPDFBytes, "idempotencyKey", "kyc-1")
	refused(t, h.execRaw(uploadKYCMutation, vars), "BAD_USER_INPUT", "input.idempotencyKey")

	for range 2 {
		h.banking.kyc.failNext("Upload", unavailable("banking"))
	}
	vars, _ = upload("lost.pdf", kycPDFBytes, "idempotencyKey", "kyc-2")
	e := refused(t, h.execRaw(uploadKYCMutation, vars), "OUTCOME_UNKNOWN", "input.idempotencyKey")
	if e.Extensions["retryable"] != false {
		t.Fatalf("a lost upload says retryable %v, want false: nothing can find it", e.Extensions["retryable"])
	}
	before := h.banking.kyc.calls("Upload")
	vars, _ = upload("lost.pdf", kycPDFBytes, "idempotencyKey", "kyc-2")
	refused(t, h.execRaw(uploadKYCMutation, vars), "OUTCOME_UNKNOWN", "input.idempotencyKey")
	if h.banking.kyc.calls("Upload") != before {
		t.Fatal("the retry of a lost upload sent it again")
	}
	vars, _ = upload("unkeyed.pdf", kycPDFBytes)
	refused(t, h.execRaw(uploadKYCMutation, vars), "UPSTREAM_UNAVAILABLE", "")
}

const updateKYCMutation = `mutation($in: UpdateKycDocumentInput!) { updateKycDocument(input: $in) { id name status expiresAt corporationId } }`

type kycUpdated struct {
	UpdateKycDocument struct {
		ID, Name, Status, CorporationID string
		ExpiresAt                       *string
	}
}

// updateKycDocument renames a document and sets its expiry for its own
// corporation; only staff set its status, and each status change (and
// only that) is announced in the document's corporation.
func TestUpdateKycDocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: "kyc-1", Name: "statutes.pdf", VerifyingStatus: banking.KYCNoMark, Type: "corporate"})
	id := relay.ID(relay.KycDocument, demoCorp, "kyc-1")
	var got kycUpdated
	h.as(person).exec(updateKYCMutation, map[string]any{"in": map[string]any{"id": id, "name": "statutes-2025.pdf", "expiresAt": "2030-06-30"}}).decode(t, &got)
	if d := got.UpdateKycDocument; d.ID != id || d.Name != "statutes-2025.pdf" || d.ExpiresAt == nil || *d.ExpiresAt != "2030-06-30" || d.Status != "NO_MARK" {
		t.Fatalf("a person's update answered %+v", d)
	}
	before := h.upstreamCalls()
	refused(t, h.exec(updateKYCMutation, map[string]any{"in": map[string]any{"id": id, "status": "VERIFIED"}}), "FORBIDDEN", "input.status")
	for _, tc := range []struct {
		in    map[string]any
		field string
	}{
		{map[string]any{"id": id, "name": ""}, "input.name"},
		{map[string]any{"id": id, "name": "../statutes.pdf"}, "input.name"},
		{map[string]any{"id": id, "name": "invoice\u202Efdp.exe"}, "input.name"},
		{map[string]any{"id": id, "name": strings.Repeat("n", 256)}, "input.name"},
		{map[string]any{"id": ""}, "input.id"},
	} {
		refused(t, h.exec(updateKYCMutation, map[string]any{"in": tc.in}), "BAD_USER_INPUT", tc.field)
	}
	h.noUpstreamCall(t, before, "a refused update")

	h.as(staff)
	for _, st := range []string{"VERIFIED", "NOT_VERIFIED", "NO_MARK"} {
		h.exec(updateKYCMutation, map[string]any{"in": map[string]any{"id": id, "corporationId": relay.ID(relay.Corporation, demoCorp), "status": st}}).decode(t, &got)
		if got.UpdateKycDocument.Status != st {
			t.Fatalf("staff set %s, got %+v", st, got.UpdateKycDocument)
		}
	}
	want := slices.Repeat([]string{"KycDocumentStatusChanged " + demoCorp}, 3)
	if got := h.events.announced(t); !slices.Equal(got, want) {
		t.Fatalf("announced %v, want the three status changes", got)
	}
	refused(t, h.exec(updateKYCMutation, map[string]any{"in": map[string]any{"id": "kyc-none", "corporationId": demoCorp, "name": "x.pdf"}}), "NOT_FOUND", "")
}

// deleteKycDocument answers the deleted document's global id; a document
// that is not in the caller's corporation (another's, or deleted) is
// NOT_FOUND.
func TestDeleteKycDocument(t *testing.T) {
	t.Parallel()
	const q = `mutation($in: DeleteKycDocumentInput!) { deleteKycDocument(input: $in) { id } }`
	h := newHarness(t)
	withColleagues(h)
	h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: "kyc-1", Name: "statutes.pdf"})
	in := map[string]any{"in": map[string]any{"id": "kyc-1"}}
	refused(t, h.as(ben).exec(q, in), "NOT_FOUND", "")
	var got struct{ DeleteKycDocument struct{ ID string } }
	h.as(person).exec(q, in).decode(t, &got)
	if got.DeleteKycDocument.ID != relay.ID(relay.KycDocument, demoCorp, "kyc-1") {
		t.Fatalf("deleted %q, want the document's global id", got.DeleteKycDocument.ID)
	}
	refused(t, h.exec(q, in), "NOT_FOUND", "")
	before := h.upstreamCalls()
	refused(t, h.exec(q, map[string]any{"in": map[string]any{"id": ""}}), "BAD_USER_INPUT", "input.id")
	h.noUpstreamCall(t, before, "an empty id")
}

// The upstream's documents map to the graph's: its statuses to the enum
// (one it does not name is NO_MARK), an expiry that is no date to null, an
// empty path to null, and the document's id names its corporation.
func TestKycDocumentsMapFromTheUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bad := "30.06.2030"
	good := "2030-06-30"
	for _, d := range []*banking.KYCDocument{
		{ID: "k-v", Name: "a.pdf", VerifyingStatus: banking.KYCVerified, Path: "kyc/a.pdf", ExpirationAt: &good},
		{ID: "k-n", Name: "b.pdf", VerifyingStatus: banking.KYCNotVerified, ExpirationAt: &bad},
		{ID: "k-m", Name: "c.pdf", VerifyingStatus: banking.KYCNoMark},
		{ID: "k-x", Name: "d.pdf", VerifyingStatus: "underReview"},
	} {
		h.banking.kyc.add(demoCorp, d)
	}
	var got struct {
		CurrentCorporation struct {
			KycDocuments []struct {
				ID, UpstreamID, Status, CorporationID string
				Path, ExpiresAt                       *string
			}
		}
	}
	h.as(apiClient).exec(`{ currentCorporation { kycDocuments { id upstreamId status path expiresAt corporationId } } }`, nil).decode(t, &got)
	var lines []string
	for _, d := range got.CurrentCorporation.KycDocuments {
		if d.ID != relay.ID(relay.KycDocument, demoCorp, d.UpstreamID) || d.CorporationID != relay.ID(relay.Corporation, demoCorp) {
			t.Fatalf("document %+v: ids do not name its corporation", d)
		}
		s := func(p *string) string {
			if p == nil {
				return "null"
			}
			return *p
		}
		lines = append(lines, d.UpstreamID+" "+d.Status+" "+s(d.Path)+" "+s(d.ExpiresAt))
	}
	want := []string{"k-v VERIFIED kyc/a.pdf 2030-06-30", "k-n NOT_VERIFIED null null", "k-m NO_MARK null null", "k-x NO_MARK null null"}
	if !slices.Equal(lines, want) {
		t.Fatalf("documents\n got %v\nwant %v", lines, want)
	}
}

// A rename keeps the document's type, as an upload's name must agree with
// its content: a PDF/HTML polyglot uploaded as a PDF is not renamed to
// .html afterwards. The type is the one the current name gives (any
// spelling of it is fine); a document of a type the gateway does not name
// keeps its extension. A refused rename is BAD_USER_INPUT on input.name
// and changes nothing.
func TestRenamingAKycDocumentKeepsItsType(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for id, name := range map[string]string{"k-pdf": "statutes.pdf", "k-jpg": "scan.jpg", "k-tiff": "legacy.tiff"} {
		h.banking.kyc.add(demoCorp, &banking.KYCDocument{ID: id, Name: name, VerifyingStatus: banking.KYCNoMark})
	}
	h.as(person)
	for _, tc := range []struct {
		id, name string
		ok       bool
	}{
		{"k-pdf", "statutes.html", false},
		{"k-pdf", "statutes.pdf.exe", false},
		{"k-pdf", "statutes.png", false},
		{"k-pdf", "statutes", false},
		{"k-pdf", "Statutes-2025.PDF", true},
		{"k-jpg", "scan.png", false},
		{"k-jpg", "scan 2.jpeg", true},
		{"k-tiff", "legacy.pdf", false},
		{"k-tiff", "legacy-2.TIFF", true},
	} {
		before := h.banking.kyc.calls("Update")
		resp := h.exec(updateKYCMutation, map[string]any{"in": map[string]any{"id": tc.id, "name": tc.name}})
		if !tc.ok {
			refused(t, resp, "BAD_USER_INPUT", "input.name")
			if h.banking.kyc.calls("Update") != before {
				t.Fatalf("the refused name %q was sent", tc.name)
			}
			continue
		}
		var got kycUpdated
		resp.decode(t, &got)
		if got.UpdateKycDocument.Name != tc.name {
			t.Fatalf("renamed to %q, answered %+v", tc.name, got.UpdateKycDocument)
		}
	}
}
