package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// heldUpload is an upload whose sender stops before the end of its file
// and keeps the connection open, as a slow or hostile client does.
type heldUpload struct {
	answer chan heldAnswer
	abort  func()
}

type heldAnswer struct {
	status int
	code   string
	err    error
}

// holdUpload sends the KYC upload mutation with a file of size bytes, of
// which it writes all but the last and then holds the request open until
// abort. The answer arrives on answer whenever the gateway sends one.
func (g *testGateway) holdUpload(t *testing.T, token string, size int) *heldUpload {
	t.Helper()
	return g.holdUploadOf(t, uploadMutation, token, size)
}

// holdUploadOf is holdUpload with an operation of the caller's that takes
// $input: UploadKycDocumentInput!.
func (g *testGateway) holdUploadOf(t *testing.T, query, token string, size int) *heldUpload {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	release := make(chan struct{})
	go func() {
		ops, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"input": map[string]any{"file": nil}}})
		_ = mw.WriteField("operations", string(ops))
		_ = mw.WriteField("map", `{"0": ["variables.input.file"]}`)
		fw, err := mw.CreateFormFile("0", "scan.pdf")
		if err != nil {
			return
		}
		chunk := bytes.Repeat([]byte{' '}, 64<<10)
		copy(chunk, "%PDF-1.7\n")
		for left := size - 1; left > 0; left -= len(chunk) {
			if _, err := fw.Write(chunk[:min(left, len(chunk))]); err != nil {
				return // the gateway stopped reading and the test let go
			}
			chunk = bytes.Repeat([]byte{' '}, 64<<10)
		}
		<-release
	}()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	h := &heldUpload{answer: make(chan heldAnswer, 1)}
	go func() {
		resp, err := (&http.Client{}).Do(req)
		if err != nil {
			h.answer <- heldAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		var out gqlResponse
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		h.answer <- heldAnswer{status: resp.StatusCode, code: out.code()}
	}()
	var once bool
	h.abort = func() {
		if once {
			return
		}
		once = true
		close(release)
		_ = pw.CloseWithError(errors.New("the sender gave up"))
		cancel()
	}
	t.Cleanup(h.abort)
	return h
}

// spooled counts the regular files under dir and their bytes.
func spooled(t *testing.T, dir string) (files int, size int64) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			files++
			size += fi.Size()
		}
		return nil
	})
	return files, size
}

// awaitAnswer waits for a held upload's answer while its sender holds the
// rest of the file; the deadline only bounds a gateway that reads the
// whole file before it answers (then it fails the test, saying what the
// gateway kept meanwhile).
func awaitAnswer(t *testing.T, h *heldUpload, dir string) heldAnswer {
	t.Helper()
	select {
	case a := <-h.answer:
		return a
	case <-time.After(20 * time.Second):
		n, b := spooled(t, dir)
		t.Fatalf("no answer while the sender held its file; the temporary directory holds %d files, %d bytes", n, b)
		return heldAnswer{}
	}
}

// TestAnonymousUploadsWriteNothing: eight uploads of 6 MiB without a
// session, held open by their senders, are refused UNAUTHENTICATED from
// their operation alone, before a byte of their files is read: the
// gateway's temporary directory stays empty while they are held.
func TestAnonymousUploadsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "-upload-dir", dir)
	// The upload field reached through a fragment at the root is checked
	// as well as one written out.
	const throughFragment = `mutation($input: UploadKycDocumentInput!) { ...Up }
fragment Up on Mutation { ... on Mutation { uploadKycDocument(input: $input) { id } } }`
	var held []*heldUpload
	for i := range 8 {
		q := uploadMutation
		if i%2 == 1 {
			q = throughFragment
		}
		held = append(held, g.holdUploadOf(t, q, "", 6<<20))
	}
	for i, h := range held {
		a := awaitAnswer(t, h, dir)
		if a.err != nil || a.status != http.StatusUnauthorized || a.code != "UNAUTHENTICATED" {
			t.Errorf("upload %d: %d %q %v, want 401 UNAUTHENTICATED", i, a.status, a.code, a.err)
		}
	}
	if n, b := spooled(t, dir); n != 0 || b != 0 {
		t.Fatalf("the refused uploads left %d files, %d bytes in the temporary directory", n, b)
	}

	// A session the operation's policy refuses (a payments customer may
	// not use banking operations) is refused the same way, FORBIDDEN.
	cust := g.signInCustomerDemo(t)
	h := g.holdUpload(t, cust, 6<<20)
	if a := awaitAnswer(t, h, dir); a.status != http.StatusForbidden || a.code != "FORBIDDEN" {
		t.Errorf("a customer's upload: %d %q %v, want 403 FORBIDDEN", a.status, a.code, a.err)
	}
	if n, b := spooled(t, dir); n != 0 || b != 0 {
		t.Fatalf("the refused upload left %d files, %d bytes in the temporary directory", n, b)
	}
}

// TestUploadsInFlightAreCapped: uploads in flight are capped per session
// and per client address; one over a cap is refused RATE_LIMITED before
// its file is read, and the files of uploads that end are removed and
// their places given back.
func TestUploadsInFlightAreCapped(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "-upload-dir", dir, "-limits", "uploadsPerSession=2,uploadsPerAddress=3")
	anna := g.signInPerson(t, bankingsim.AnnaEmail)
	ben := g.signInPerson(t, bankingsim.BenEmail)

	// Two of Anna's, held past the memory bound: each is spooled.
	a1, a2 := g.holdUpload(t, anna, 3<<20), g.holdUpload(t, anna, 3<<20)
	waitFor(t, "Anna's two uploads spooled", func() bool { n, _ := spooled(t, dir); return n == 2 })
	a3 := g.holdUpload(t, anna, 3<<20)
	if a := awaitAnswer(t, a3, dir); a.status != http.StatusTooManyRequests || a.code != "RATE_LIMITED" {
		t.Errorf("Anna's third upload: %d %q %v, want 429 RATE_LIMITED", a.status, a.code, a.err)
	}
	// Ben's first is his session's first but the address's third.
	b1 := g.holdUpload(t, ben, 3<<20)
	waitFor(t, "Ben's upload spooled", func() bool { n, _ := spooled(t, dir); return n == 3 })
	b2 := g.holdUpload(t, ben, 3<<20)
	if a := awaitAnswer(t, b2, dir); a.status != http.StatusTooManyRequests || a.code != "RATE_LIMITED" {
		t.Errorf("the address's fourth upload: %d %q %v, want 429 RATE_LIMITED", a.status, a.code, a.err)
	}
	if n, _ := spooled(t, dir); n != 3 {
		t.Errorf("%d files spooled, want the 3 admitted uploads'", n)
	}

	for _, h := range []*heldUpload{a1, a2, b1} {
		h.abort()
	}
	waitFor(t, "the abandoned uploads' files removed", func() bool { n, _ := spooled(t, dir); return n == 0 })
	// Their places are free again: Anna's next upload is taken and judged.
	r := g.as(anna).uploadKYC(t, "small.pdf", []byte("%PDF-1.7\n%%EOF\n"))
	if c := r.code(); c == "RATE_LIMITED" {
		t.Fatalf("an upload after the others ended: %+v", r.Errors)
	}
}

// TestUploadSpoolIsBounded: the temporary space of all uploads together is
// bounded; an upload that would pass the bound is refused RATE_LIMITED
// while it is read, and its file is removed.
func TestUploadSpoolIsBounded(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, "-upload-dir", dir, "-limits", "uploadSpoolBytes=2097152")
	anna := g.signInPerson(t, bankingsim.AnnaEmail)
	h := g.holdUpload(t, anna, 4<<20)
	if a := awaitAnswer(t, h, dir); a.status != http.StatusServiceUnavailable || a.code != "RATE_LIMITED" {
		t.Errorf("an upload past the temporary space: %d %q %v, want 503 RATE_LIMITED", a.status, a.code, a.err)
	}
	waitFor(t, "the refused upload's file removed", func() bool { n, _ := spooled(t, dir); return n == 0 })
	// The space is given back: a small upload is taken and judged.
	if r := g.as(anna).uploadKYC(t, "small.pdf", []byte("%PDF-1.7\n%%EOF\n")); r.code() == "RATE_LIMITED" {
		t.Fatalf("an upload after the refused one: %+v", r.Errors)
	}
}
