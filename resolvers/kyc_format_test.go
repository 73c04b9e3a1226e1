package resolvers

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// compound builds an OLE2 file whose directory holds the given stream names
// after the root entry, four entries per 512-byte sector, the directory
// sectors chained in the FAT.
func compound(streams ...string) []byte {
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

func pkg(parts ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, _ := zw.Create(p)
		_, _ = w.Write([]byte("<x/>"))
	}
	_ = zw.Close()
	return buf.Bytes()
}

func TestDetectKYCFormatByContent(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want string // "" refused
	}{
		{"jpeg", []byte{0xFF, 0xD8, 0xFF, 0xDB, 0, 0}, "JPEG"},
		{"png", []byte("\x89PNG\r\n\x1a\n...."), "PNG"},
		{"pdf", []byte("%PDF-1.4\n%%EOF"), "PDF"},
		{"doc", compound("WordDocument", "1Table"), "DOC"},
		{"xls", compound("Workbook"), "XLS"},
		{"xls 95", compound("Book"), "XLS"},
		{"doc, stream in the second directory sector", compound("a", "b", "c", "d", "e", "WordDocument"), "DOC"},
		{"docx", pkg("[Content_Types].xml", "word/document.xml"), "DOCX"},
		{"xlsx", pkg("[Content_Types].xml", "xl/workbook.xml"), "XLSX"},
		{"executable", []byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00"), ""},
		{"elf", []byte("\x7fELF\x02\x01\x01"), ""},
		{"script", []byte("#!/bin/sh\nrm -rf /\n"), ""},
		{"pptx", pkg("[Content_Types].xml", "ppt/presentation.xml"), ""},
		{"jar", pkg("META-INF/MANIFEST.MF", "a.class"), ""},
		{"docx without content types", pkg("word/document.xml"), ""},
		{"both word and xl", pkg("[Content_Types].xml", "word/a.xml", "xl/b.xml"), ""},
		{"ppt", compound("PowerPoint Document"), ""},
		{"truncated compound", compound("WordDocument")[:600], ""},
		{"broken zip", []byte("PK\x03\x04garbage"), ""},
		{"empty", nil, ""},
		{"png prefix only", []byte("\x89PNG"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := detectKYCFormat(&seekerReaderAt{rs: bytes.NewReader(c.data)}, int64(len(c.data)))
			if ok != (c.want != "") || f.name != c.want {
				t.Fatalf("got %q %v, want %q", f.name, ok, c.want)
			}
		})
	}
}
