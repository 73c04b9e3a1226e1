package events

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// A cursor is an event's stream position, encrypted: 16 bytes, AES-128
// over the sequence and eight zero bytes, in unpadded base64url, under a
// key drawn when the stream was laid out (its epoch, kept in its metadata,
// never shown to a client). A client can resume after it, and cannot read
// from it how far the stream moved between two of its events, that is how
// much the other tenants did, nor forge one: any change scrambles the
// whole block and fails the zero check. Positions are the stream's own, so
// every replica, and every scope, reads the same cursor the same way; what a
// cursor lets a reader see is still only its scope's events.
//
// A stream that is reset (deleted, replaced, laid out anew) draws a new
// epoch, so a cursor from the old one fails the check and is refused
// rather than matched against unrelated events. So is a cursor of the
// older "<sequence>.<epoch>" form.

// cursorCodec seals and opens the cursors of one epoch.
type cursorCodec struct {
	epoch string
	block cipher.Block
}

func newCursorCodec(epoch string) *cursorCodec {
	k := sha256.Sum256([]byte("fingraph cursor key\x00" + epoch))
	b, _ := aes.NewCipher(k[:16]) // a 16-byte key is always valid
	return &cursorCodec{epoch: epoch, block: b}
}

// newEpoch draws the epoch of a stream laid out now: 128 random bits.
func newEpoch() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cursorLen is the length of an encoded cursor.
var cursorLen = base64.RawURLEncoding.EncodedLen(aes.BlockSize)

func (c *cursorCodec) format(seq uint64) string {
	var b [aes.BlockSize]byte
	binary.BigEndian.PutUint64(b[:8], seq)
	c.block.Encrypt(b[:], b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// open reads a cursor: ErrStaleCursor when it is one of another epoch (or
// of the older form), ErrBadCursor when it is no cursor at all.
func (c *cursorCodec) open(s string) (uint64, error) {
	if strings.Contains(s, ".") {
		if seq, epoch, _ := strings.Cut(s, "."); seq != "" && epoch != "" && strings.Trim(seq, "0123456789") == "" {
			return 0, ErrStaleCursor // the older form: an earlier layout of the stream
		}
		return 0, ErrBadCursor
	}
	if len(s) != cursorLen {
		return 0, ErrBadCursor
	}
	var b [aes.BlockSize]byte
	if n, err := base64.RawURLEncoding.Decode(b[:], []byte(s)); err != nil || n != aes.BlockSize {
		return 0, ErrBadCursor
	}
	c.block.Decrypt(b[:], b[:])
	if binary.BigEndian.Uint64(b[8:]) != 0 {
		return 0, ErrStaleCursor
	}
	return binary.BigEndian.Uint64(b[:8]), nil
}

// parseCursor checks a cursor against the stream's position.
func parseCursor(c string, pos position) (uint64, error) {
	seq, err := pos.codec.open(c)
	if err != nil {
		return 0, err
	}
	if seq > pos.last {
		return 0, ErrFutureCursor
	}
	return seq, nil
}
