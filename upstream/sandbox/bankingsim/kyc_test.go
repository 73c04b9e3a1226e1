package bankingsim_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// ole2 builds a minimal compound file whose directory holds one stream.
func ole2(stream string) []byte {
	b := make([]byte, 512*3)
	copy(b, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
	le := binary.LittleEndian
	le.PutUint16(b[0x18:], 0x3E)
	le.PutUint16(b[0x1A:], 3)
	le.PutUint16(b[0x1C:], 0xFFFE)
	le.PutUint16(b[0x1E:], 9)
	le.PutUint16(b[0x20:], 6)
	le.PutUint32(b[0x2C:], 1)          // one FAT sector
	le.PutUint32(b[0x30:], 1)          // directory at sector 1
	le.PutUint32(b[0x38:], 4096)       // mini stream cutoff
	le.PutUint32(b[0x3C:], 0xFFFFFFFE) // no mini FAT
	le.PutUint32(b[0x44:], 0xFFFFFFFE) // no DIFAT sectors
	le.PutUint32(b[0x4C:], 0)          // FAT in sector 0
	for i := 0x50; i < 512; i += 4 {
		le.PutUint32(b[i:], 0xFFFFFFFF)
	}
	fat := b[512:1024]
	for i := 0; i < 512; i += 4 {
		le.PutUint32(fat[i:], 0xFFFFFFFF)
	}
	le.PutUint32(fat[0:], 0xFFFFFFFD) // sector 0 is the FAT
	le.PutUint32(fat[4:], 0xFFFFFFFE) // the directory ends at sector 1
	dir := b[1024:]
	entry := func(i int, name string, typ byte) {
		e := dir[i*128:]
		u := utf16.Encode([]rune(name))
		for j, c := range u {
			le.PutUint16(e[j*2:], c)
		}
		le.PutUint16(e[0x40:], uint16(len(u)*2+2))
		e[0x42] = typ
		le.PutUint32(e[0x44:], 0xFFFFFFFF)
		le.PutUint32(e[0x48:], 0xFFFFFFFF)
		le.PutUint32(e[0x4C:], 0xFFFFFFFF)
	}
	entry(0, "Root Entry", 5)
	entry(1, stream, 2)
	return b
}

// ole2Chain builds an OLE2 file whose directory holds the given stream names
// after the root entry, four entries per 512-byte sector, the directory
// sectors chained in the FAT.
func ole2Chain(streams ...string) []byte {
	le := binary.LittleEndian
	names := append([]string{"Root Entry"}, streams...)
	dirSectors := (len(names) + 3) / 4
	b := make([]byte, 512*(2+dirSectors))
	copy(b, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
	le.PutUint16(b[0x1A:], 3)
	le.PutUint16(b[0x1C:], 0xFFFE)
	le.PutUint16(b[0x1E:], 9)
	le.PutUint32(b[0x2C:], 1)
	le.PutUint32(b[0x30:], 1)
	for i := 0x4C; i < 512; i += 4 {
		le.PutUint32(b[i:], 0xFFFFFFFF)
	}
	le.PutUint32(b[0x4C:], 0)
	fat := b[512:1024]
	for i := 0; i < 512; i += 4 {
		le.PutUint32(fat[i:], 0xFFFFFFFF)
	}
	le.PutUint32(fat[0:], 0xFFFFFFFD)
	for s := 1; s <= dirSectors; s++ {
		next := uint32(s + 1)
		if s == dirSectors {
			next = 0xFFFFFFFE
		}
		le.PutUint32(fat[4*s:], next)
	}
	for i, name := range names {
		e := b[1024+i*128:]
		u := utf16.Encode([]rune(name))
		for j, c := range u {
			le.PutUint16(e[2*j:], c)
		}
		le.PutUint16(e[64:], uint16(2*len(u)+2))
		e[66] = 2
		if i == 0 {
			e[66] = 5
		}
	}
	return b
}

// ooxml builds a zip package with the given part names.
func ooxml(parts ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range append([]string{"[Content_Types].xml"}, parts...) {
		w, _ := zw.Create(p)
		_, _ = w.Write([]byte("<x/>"))
	}
	_ = zw.Close()
	return buf.Bytes()
}

// kycSamples are one file of each accepted format.
var kycSamples = map[string][]byte{
	"scan.jpg":  append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{1}, 64)...),
	"scan.png":  append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{2}, 64)...),
	"cert.pdf":  []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n"),
	"memo.doc":  ole2("WordDocument"),
	"book.xls":  ole2("Workbook"),
	"memo.docx": ooxml("word/document.xml"),
	"book.xlsx": ooxml("xl/workbook.xml"),
	// The Word stream in the directory's second sector, found along the FAT.
	"long.doc": ole2Chain("a", "b", "c", "d", "e", "WordDocument"),
}

func (e *env) upload(token, corp string, fields map[string]string, filename string, data []byte) resp {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if data != nil {
		fw, _ := mw.CreateFormFile("file", filename)
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/banking/v2/corporations/"+corp+"/kyc-documents", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("x-access-token", token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	var out resp
	out.status = res.StatusCode
	_ = json.NewDecoder(res.Body).Decode(&out.body)
	return out
}

func (e *env) kycStore() (count, size int) {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + "/_sandbox/kyc-documents")
	require.NoError(e.t, err)
	defer res.Body.Close()
	var v struct{ Count, Bytes int }
	require.NoError(e.t, json.NewDecoder(res.Body).Decode(&v))
	return v.Count, v.Bytes
}

func TestKYCUploadAcceptsEachFormatByContent(t *testing.T) {
	e := newEnv(t)
	tok := e.signInPerson(bankingsim.AnnaEmail)
	for name, data := range kycSamples {
		r := e.upload(tok, bankingsim.DemoCorporationID, map[string]string{"type": "corporate"}, name, data)
		require.Equal(t, 200, r.status, "%s: %v", name, r.body)
		require.Equal(t, bankingsim.KYCNoMark, r.body["verifying_status"])
		require.Equal(t, name, r.body["name"])
	}
	r := e.do("GET", "/banking/v2/corporations/"+bankingsim.DemoCorporationID+"/kyc-documents", tok, nil)
	require.Equal(t, 200, r.status)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &list))
	require.Len(t, list, len(kycSamples)+1) // and the seeded one
}

func TestKYCUploadRefusalsStoreNothing(t *testing.T) {
	e := newEnv(t)
	tok := e.signInPerson(bankingsim.AnnaEmail)
	n0, b0 := e.kycStore()
	exe := append([]byte("MZ\x90\x00"), bytes.Repeat([]byte{0}, 128)...)
	cases := []struct {
		name, filename string
		fields         map[string]string
		data           []byte
		status         int
		field          string
		code           int
	}{
		{"renamed executable", "invoice.pdf", map[string]string{"type": "corporate"}, exe, 400, "file", bankingsim.CodeInvalid},
		{"other zip", "memo.docx", map[string]string{"type": "corporate"}, ooxml("META-INF/MANIFEST.MF"), 400, "file", bankingsim.CodeInvalid},
		{"other OLE2", "deck.doc", map[string]string{"type": "corporate"}, ole2("PowerPoint Document"), 400, "file", bankingsim.CodeInvalid},
		{"too large", "big.pdf", map[string]string{"type": "corporate"},
			append([]byte("%PDF-1.7\n"), make([]byte, bankingsim.MaxKYCFileBytes)...), 413, "file", bankingsim.CodeInvalid},
		{"no file", "", map[string]string{"type": "corporate"}, nil, 400, "file", bankingsim.CodeRequired},
		{"no type", "a.pdf", nil, kycSamples["cert.pdf"], 400, "type", bankingsim.CodeRequired},
		{"wrong type", "a.pdf", map[string]string{"type": "personal"}, kycSamples["cert.pdf"], 400, "type", bankingsim.CodeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.upload(tok, bankingsim.DemoCorporationID, c.fields, c.filename, c.data)
			require.Equal(t, c.status, r.status, r.body)
			require.True(t, r.hasErr(c.field, c.code), "%v", r.body)
		})
	}
	n1, b1 := e.kycStore()
	require.Equal(t, n0, n1)
	require.Equal(t, b0, b1)
}

func TestKYCStatusIsStaffOnlyAndDeleteRemoves(t *testing.T) {
	e := newEnv(t)
	anna := e.signInPerson(bankingsim.AnnaEmail)
	r := e.upload(anna, bankingsim.DemoCorporationID, map[string]string{"type": "corporate"}, "a.pdf", kycSamples["cert.pdf"])
	require.Equal(t, 200, r.status)
	id := r.body["id"].(string)
	path := "/banking/v2/corporations/" + bankingsim.DemoCorporationID + "/kyc-documents/" + id

	r = e.do("PUT", path, anna, map[string]any{"verifying_status": "verified"})
	require.Equal(t, 403, r.status)
	require.Equal(t, "verifying_status", r.err0()["field"])

	staff := e.signInStaff()
	r = e.do("PUT", path, staff, map[string]any{"verifying_status": "maybe"})
	require.True(t, r.hasErr("verifying_status", bankingsim.CodeInvalid))
	for _, st := range []string{"verified", "notVerified", "noMark"} {
		r = e.do("PUT", path, staff, map[string]any{"verifying_status": st})
		require.Equal(t, 200, r.status, r.body)
		require.Equal(t, st, r.body["verifying_status"])
	}
	r = e.do("PUT", path, anna, map[string]any{"name": "renamed.pdf", "expiration_at": "2030-01-31"})
	require.Equal(t, 200, r.status, r.body)
	require.Equal(t, "2030-01-31", r.body["expiration_at"])

	ben := e.signInPerson(bankingsim.BenEmail)
	require.Equal(t, 404, e.do("DELETE", path, ben, nil).status)
	r = e.do("DELETE", path, anna, nil)
	require.Equal(t, 200, r.status)
	require.Equal(t, id, r.body["id"])
	require.Equal(t, 404, e.do("DELETE", path, anna, nil).status)
}
