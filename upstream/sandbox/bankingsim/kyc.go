package bankingsim

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// MaxKYCFileBytes is the sandbox's size limit of one KYC file; the spec
// gives none.
const MaxKYCFileBytes = 10 << 20

// KYC document verifying statuses.
const (
	KYCNoMark      = "noMark"
	KYCVerified    = "verified"
	KYCNotVerified = "notVerified"
)

// kycDocument is a Corporation KYC document and its file.
type kycDocument struct {
	ID, CorpID, Name, Status, Type, Path, Format string
	ExpirationAt                                 *string
	CreatedByLogin, UpdatedByLogin               string
	CreatedAt, UpdatedAt                         time.Time
	CreatedBy, UpdatedBy                         *actor
	data                                         []byte
}

func (s *Sim) kycJSONLocked(d *kycDocument) map[string]any {
	identity := ""
	if c := s.corporations[d.CorpID]; c != nil {
		identity = c.IdentityID
	}
	var exp any
	if d.ExpirationAt != nil {
		exp = *d.ExpirationAt
	}
	return map[string]any{
		"id": d.ID, "name": d.Name, "verifying_status": d.Status, "type": d.Type, "path": d.Path,
		"expiration_at": exp, "created_by_login_id": d.CreatedByLogin, "updated_by_login_id": d.UpdatedByLogin,
		"identity_id": identity, "created_at": ts(d.CreatedAt), "updated_at": ts(d.UpdatedAt),
		"created_by": d.CreatedBy, "updated_by": d.UpdatedBy,
	}
}

// loginIDLocked is the login id a principal acts under: the person's login,
// or the staff member's or API key's own id (the spec shows no other login).
func (s *Sim) loginIDLocked(p principal) string {
	if p.kind == kindPerson {
		if pp := s.persons[p.id]; pp != nil {
			return pp.PersonLoginID
		}
	}
	return p.id
}

// kycCorporationLocked finds the corporation of a KYC route; introducers
// may not touch KYC documents (403), others see their scope (404 outside).
func (s *Sim) kycCorporationLocked(w http.ResponseWriter, p principal, id string) *corporation {
	if p.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot manage KYC documents")
		return nil
	}
	return s.scopedCorporationLocked(w, p, id)
}

func (s *Sim) listKYC(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.kycCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	var docs []*kycDocument
	for _, d := range s.kyc {
		if d.CorpID == c.ID {
			docs = append(docs, d)
		}
	}
	sort.Slice(docs, func(i, j int) bool {
		if !docs[i].CreatedAt.Equal(docs[j].CreatedAt) {
			return docs[i].CreatedAt.Before(docs[j].CreatedAt)
		}
		return docs[i].ID < docs[j].ID
	})
	out := make([]any, 0, len(docs))
	for _, d := range docs {
		out = append(out, s.kycJSONLocked(d))
	}
	writeJSON(w, http.StatusOK, out)
}

// uploadKYC reads multipart/form-data part by part: the file is read up to
// the size limit and recognised by its content, never by its name or its
// declared type. Nothing is stored unless every check passes.
func (s *Sim) uploadKYC(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	c := s.kycCorporationLocked(w, pr, chi.URLParam(r, "id"))
	s.mu.Unlock()
	if c == nil {
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		badRequest(w, fieldErr("", "the body must be multipart/form-data", CodeInvalid))
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		badRequest(w, fieldErr("", "the body must be multipart/form-data", CodeInvalid))
		return
	}
	var (
		e        errs
		data     []byte
		filename string
		hasFile  bool
		docType  string
		hasType  bool
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			badRequest(w, fieldErr("", "the multipart body is malformed", CodeInvalid))
			return
		}
		switch part.FormName() {
		case "file":
			if hasFile {
				e.invalid("file", "only one file may be sent")
				_ = part.Close()
				continue
			}
			hasFile = true
			filename = part.FileName()
			data, err = io.ReadAll(io.LimitReader(part, MaxKYCFileBytes+1))
			if err != nil {
				badRequest(w, fieldErr("file", "the file could not be read", CodeInvalid))
				return
			}
			if len(data) > MaxKYCFileBytes {
				writeErrors(w, http.StatusRequestEntityTooLarge,
					fieldErr("file", "file must be at most "+itoa(MaxKYCFileBytes>>20)+" MiB", CodeInvalid))
				return
			}
		case "type":
			v, err := io.ReadAll(io.LimitReader(part, 256))
			if err != nil {
				badRequest(w, fieldErr("type", "type could not be read", CodeInvalid))
				return
			}
			docType, hasType = strings.TrimSpace(string(v)), true
		default:
			e.invalid(part.FormName(), "unknown field")
		}
		_ = part.Close()
	}
	format := ""
	switch {
	case !hasFile || len(data) == 0:
		e.required("file")
	default:
		format = sniffKYC(data)
		if format == "" {
			e.invalid("file", "file must be JPEG, PNG, PDF, DOC, DOCX, XLS or XLSX")
		}
	}
	if !hasType || docType == "" {
		e.required("type")
	} else if docType != "corporate" {
		e.invalid("type", "type must be corporate")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	name := path.Base(strings.ReplaceAll(filename, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		name = "document." + format
	}
	d := &kycDocument{ID: uuid.NewString(), CorpID: c.ID, Name: name, Status: KYCNoMark, Type: docType,
		Format: format, CreatedByLogin: s.loginIDLocked(pr), UpdatedByLogin: s.loginIDLocked(pr),
		CreatedAt: now, UpdatedAt: now, CreatedBy: s.actorLocked(pr), UpdatedBy: s.actorLocked(pr), data: data}
	d.Path = "kyc-documents/" + c.ID + "/" + d.ID + "." + format
	s.kyc[d.ID] = d
	writeJSON(w, http.StatusOK, s.kycJSONLocked(d))
}

func (s *Sim) scopedKYCLocked(w http.ResponseWriter, r *http.Request) *kycDocument {
	c := s.kycCorporationLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return nil
	}
	d := s.kyc[chi.URLParam(r, "documentId")]
	if d == nil || d.CorpID != c.ID {
		notFound(w, "KYC document")
		return nil
	}
	return d
}

// updateKYC changes name, type, expiration_at and verifying_status. Setting
// verifying_status is for staff: a corporation does not verify its own KYC.
func (s *Sim) updateKYC(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.scopedKYCLocked(w, r)
	if d == nil {
		return
	}
	var e errs
	b.unknown(&e, "", "name", "type", "expiration_at", "verifying_status")
	nd := *d
	if v, ok := b.str(&e, "", "name"); ok {
		if strings.TrimSpace(v) == "" {
			e.invalid("name", "name must not be empty")
		}
		maxLen(&e, "name", v, 255)
		nd.Name = v
	}
	if v, ok := b.str(&e, "", "type"); ok {
		oneOf(&e, "type", v, "corporate")
		nd.Type = v
	}
	if v, ok := b.nullableStr(&e, "", "expiration_at"); ok {
		if v != nil {
			checkDate(&e, "expiration_at", *v)
		}
		nd.ExpirationAt = v
	}
	if v, ok := b.str(&e, "", "verifying_status"); ok {
		oneOf(&e, "verifying_status", v, KYCNoMark, KYCVerified, KYCNotVerified)
		if !pr.isStaff() && len(e) == 0 {
			forbidden(w, "verifying_status", "only staff members verify KYC documents")
			return
		}
		nd.Status = v
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	nd.UpdatedAt = s.now()
	nd.UpdatedByLogin = s.loginIDLocked(pr)
	nd.UpdatedBy = s.actorLocked(pr)
	*d = nd
	writeJSON(w, http.StatusOK, s.kycJSONLocked(d))
}

func (s *Sim) deleteKYC(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.scopedKYCLocked(w, r)
	if d == nil {
		return
	}
	delete(s.kyc, d.ID)
	writeJSON(w, http.StatusOK, map[string]any{"id": d.ID})
}

// getKYCStore is the control route GET /_sandbox/kyc-documents: how many
// documents and bytes the sandbox holds, so tests can show that a refused
// upload left nothing behind.
func (s *Sim) getKYCStore(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, size := 0, 0
	for _, d := range s.kyc {
		n++
		size += len(d.data)
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": n, "bytes": size})
}

// sniffKYC names the format of an accepted KYC file from its content, or
// "" when it is none of JPEG, PNG, PDF, DOC, XLS (OLE2 compound files with
// a WordDocument or Workbook stream), DOCX or XLSX (zip packages with word/
// or xl/ parts).
func sniffKYC(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return "pdf"
	case bytes.HasPrefix(b, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return sniffOLE2(b)
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return sniffOOXML(b)
	}
	return ""
}

// sniffOLE2 reads the directory of a compound file (its sectors chained in
// the FAT, whose own sectors the header lists) and looks for the stream that
// makes it a Word document or an Excel workbook.
func sniffOLE2(b []byte) string {
	if len(b) < 512 {
		return ""
	}
	le := binary.LittleEndian
	shift := le.Uint16(b[0x1E:])
	if shift != 9 && shift != 12 {
		return ""
	}
	size := 1 << shift
	sec := func(n uint32) []byte {
		off := (int(n) + 1) * size
		if n >= 0xFFFFFFFA || off < 0 || off+size > len(b) {
			return nil
		}
		return b[off : off+size]
	}
	next := func(n uint32) uint32 {
		per := uint32(size / 4)
		idx := n / per
		if idx >= 109 {
			return 0xFFFFFFFE
		}
		fs := sec(le.Uint32(b[0x4C+4*idx:]))
		if fs == nil {
			return 0xFFFFFFFE
		}
		return le.Uint32(fs[4*(n%per):])
	}
	for dir, seen := le.Uint32(b[0x30:]), 0; seen < 1024; dir, seen = next(dir), seen+1 {
		sector := sec(dir)
		if sector == nil {
			return ""
		}
		for i := 0; i+128 <= len(sector); i += 128 {
			e := sector[i : i+128]
			n := int(le.Uint16(e[0x40:]))
			if n < 2 || n > 64 || e[0x42] != 2 { // a stream entry
				continue
			}
			u := make([]uint16, 0, n/2-1)
			for j := 0; j+1 < n-2; j += 2 {
				u = append(u, le.Uint16(e[j:]))
			}
			switch string(utf16.Decode(u)) {
			case "WordDocument":
				return "doc"
			case "Workbook", "Book":
				return "xls"
			}
		}
	}
	return ""
}

// sniffOOXML opens a zip package: [Content_Types].xml plus word/ parts is a
// DOCX, plus xl/ parts an XLSX. Any other zip (or a renamed jar) is refused.
func sniffOOXML(b []byte) string {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return ""
	}
	var types, word, xl bool
	for _, f := range zr.File {
		switch {
		case f.Name == "[Content_Types].xml":
			types = true
		case strings.HasPrefix(f.Name, "word/"):
			word = true
		case strings.HasPrefix(f.Name, "xl/"):
			xl = true
		}
	}
	switch {
	case types && word && !xl:
		return "docx"
	case types && xl && !word:
		return "xlsx"
	}
	return ""
}
