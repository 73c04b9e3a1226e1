package resolvers

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"sync"
	"unicode/utf16"
)

// MaxKYCFileBytes bounds one KYC file at the gateway, before anything is
// sent upstream.
const MaxKYCFileBytes = 10 << 20

// kycFormat is an accepted KYC file format and the media type the gateway
// declares for it upstream (never the client's declared type).
type kycFormat struct {
	name, mediaType string
}

var (
	kycJPEG = kycFormat{"JPEG", "image/jpeg"}
	kycPNG  = kycFormat{"PNG", "image/png"}
	kycPDF  = kycFormat{"PDF", "application/pdf"}
	kycDOC  = kycFormat{"DOC", "application/msword"}
	kycXLS  = kycFormat{"XLS", "application/vnd.ms-excel"}
	kycDOCX = kycFormat{"DOCX", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
	kycXLSX = kycFormat{"XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
)

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
