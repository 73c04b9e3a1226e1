package resolvers

// Helpers of the KYC resolver tests: what the fake KYC service reads of an
// upload.

import (
	"io"
	"strings"
)

// kycSniff names a file's format by its first bytes, "" for one the
// banking upstream refuses: the fake recognises an upload by its content,
// as the upstream does, with no code of the gateway's.
func kycSniff(b []byte) string {
	for _, m := range []struct{ magic, ext string }{
		{"%PDF-", "pdf"}, {"\xFF\xD8\xFF", "jpg"}, {"\x89PNG\r\n\x1a\n", "png"},
		{"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", "ole"}, {"PK\x03\x04", "zip"},
	} {
		if strings.HasPrefix(string(b), m.magic) {
			return m.ext
		}
	}
	return ""
}

// readUpload reads an uploaded file to its end, as the upstream receives
// it.
func readUpload(r io.Reader) ([]byte, error) { return io.ReadAll(r) }
