package resolvers

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fingraph/fingraph/gqlerr"
)

// MaxKYCFileBytes bounds one KYC file at the gateway, before anything is
// sent upstream.
const MaxKYCFileBytes = 10 << 20

// maxFileNameBytes bounds a file name, as most file systems do.
const maxFileNameBytes = 255

// kycFormat is an accepted KYC file format, the media type the gateway
// declares for it upstream (never the client's declared type), and the
// extensions a file of it may be named with.
type kycFormat struct {
	name, mediaType string
	exts            []string
}

var (
	kycJPEG = kycFormat{"JPEG", "image/jpeg", []string{".jpg", ".jpeg"}}
	kycPNG  = kycFormat{"PNG", "image/png", []string{".png"}}
	kycPDF  = kycFormat{"PDF", "application/pdf", []string{".pdf"}}
	kycDOC  = kycFormat{"DOC", "application/msword", []string{".doc"}}
	kycXLS  = kycFormat{"XLS", "application/vnd.ms-excel", []string{".xls"}}
	kycDOCX = kycFormat{"DOCX", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []string{".docx"}}
	kycXLSX = kycFormat{"XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []string{".xlsx"}}
)

// checkFileName refuses a file name that is not plain text a reviewer can
// trust: empty, "." or "..", with a path separator, not UTF-8, longer than
// maxFileNameBytes, or holding a control, format (the bidirectional
// overrides and isolates, zero-width characters) or line-separator
// character, any of which can make a name read as something it is not
// ("invoice<RLO>fdp.exe" shows as "invoiceexe.pdf").
func checkFileName(field, name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return gqlerr.BadInput(field, "%s needs a file name", field)
	case strings.ContainsAny(name, "/\\"):
		return gqlerr.BadInput(field, "%s must be a file name without directories", field)
	case !utf8.ValidString(name):
		return gqlerr.BadInput(field, "%s must be UTF-8", field)
	case len(name) > maxFileNameBytes:
		return gqlerr.BadInput(field, "%s must be at most %d bytes long", field, maxFileNameBytes)
	}
	for _, r := range name {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs) || r == utf8.RuneError {
			return gqlerr.BadInput(field, "%s must not hold control, formatting or direction characters", field)
		}
	}
	return nil
}

// kycFileName checks an uploaded KYC file's name and that its extension
// agrees with the format its content was recognised as: a PDF named
// ".html" is a polyglot meant for a browser, refused.
func kycFileName(name string, f kycFormat) (string, error) {
	const field = "input.file"
	if err := checkFileName(field, name); err != nil {
		return "", err
	}
	ext := strings.ToLower(path.Ext(name))
	if !slices.Contains(f.exts, ext) {
		return "", gqlerr.BadInput(field, "%s holds a %s file, so its name must end in %s", field, f.name, strings.Join(f.exts, " or "))
	}
	return name, nil
}

// detectKYCFormat recognises a KYC file by its content: magic bytes for
// JPEG, PNG and PDF; an OLE2 compound file whose directory holds a
// WordDocument (DOC) or Workbook/Book (XLS) stream; a zip package with
// [Content_Types].xml and word/ (DOCX) or xl/ (XLSX) parts. The name and the
// declared type are never consulted: a renamed executable is refused. f is
// read from where it stands to its end; size is its length.
func detectKYCFormat(f io.ReaderAt, size int64) (kycFormat, bool) {
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return kycJPEG, true
	case bytes.Equal(head, []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}):
		return kycPNG, true
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return kycPDF, true
	case bytes.Equal(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return compoundFormat(f, size)
	case bytes.HasPrefix(head, []byte{'P', 'K', 3, 4}):
		return packageFormat(f, size)
	}
	return kycFormat{}, false
}

// compoundFormat walks the directory of an OLE2 compound file along its
// FAT chain (the FAT sectors listed in the header; enough for any file under
// the size limit) and names the format by its main stream.
func compoundFormat(f io.ReaderAt, size int64) (kycFormat, bool) {
	hdr := make([]byte, 512)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return kycFormat{}, false
	}
	le := binary.LittleEndian
	shift := le.Uint16(hdr[30:])
	if shift != 9 && shift != 12 {
		return kycFormat{}, false
	}
	secSize := int64(1) << shift
	sector := func(n uint32) []byte {
		off := (int64(n) + 1) * secSize
		if off+secSize > size {
			return nil
		}
		b := make([]byte, secSize)
		if _, err := f.ReadAt(b, off); err != nil {
			return nil
		}
		return b
	}
	// The FAT: up to 109 sectors are listed in the header.
	nFAT := min(le.Uint32(hdr[44:]), 109)
	var fat []uint32
	for i := uint32(0); i < nFAT; i++ {
		s := sector(le.Uint32(hdr[76+4*i:]))
		if s == nil {
			return kycFormat{}, false
		}
		for j := 0; j+4 <= len(s); j += 4 {
			fat = append(fat, le.Uint32(s[j:]))
		}
	}
	const endOfChain = 0xFFFFFFFE
	dir := le.Uint32(hdr[48:])
	for hops := 0; dir < endOfChain-5 && hops < 4096; hops++ {
		s := sector(dir)
		if s == nil {
			return kycFormat{}, false
		}
		for i := 0; i+128 <= len(s); i += 128 {
			e := s[i : i+128]
			nameLen := int(le.Uint16(e[64:]))
			if e[66] != 2 || nameLen < 4 || nameLen > 64 { // streams only
				continue
			}
			name := make([]uint16, (nameLen-2)/2)
			for k := range name {
				name[k] = le.Uint16(e[2*k:])
			}
			switch string(utf16.Decode(name)) {
			case "WordDocument":
				return kycDOC, true
			case "Workbook", "Book":
				return kycXLS, true
			}
		}
		if int(dir) >= len(fat) {
			break
		}
		dir = fat[dir]
	}
	return kycFormat{}, false
}

// packageFormat opens an Office Open XML package.
func packageFormat(f io.ReaderAt, size int64) (kycFormat, bool) {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return kycFormat{}, false
	}
	var contentTypes, word, xl bool
	for _, zf := range zr.File {
		switch name := zf.Name; {
		case name == "[Content_Types].xml":
			contentTypes = true
		case strings.HasPrefix(name, "word/"):
			word = true
		case strings.HasPrefix(name, "xl/"):
			xl = true
		}
	}
	switch {
	case contentTypes && word && !xl:
		return kycDOCX, true
	case contentTypes && xl && !word:
		return kycXLSX, true
	}
	return kycFormat{}, false
}

// seekerReaderAt gives an upload's io.ReadSeeker the random access the zip
// reader needs, without reading the file into memory.
type seekerReaderAt struct {
	mu sync.Mutex
	rs io.ReadSeeker
}

func (s *seekerReaderAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.rs.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(s.rs, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}
