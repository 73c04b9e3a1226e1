package gqlhttp

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"os"

	"github.com/99designs/gqlgen/graphql"
)

// spool holds the files of one request: in memory up to maxMemory in all,
// then one temporary file each.
type spool struct {
	maxMemory int64
	used      int64
	temp      []*os.File
	// gate bounds the bytes on disk of all requests; reserved is what this
	// request took of it.
	gate     *UploadGate
	reserved int64
}

// stored is one file of the request, in memory or in a temporary file.
type stored struct {
	filename, contentType string
	data                  []byte
	file                  *os.File
	size                  int64
}

// upload is a fresh reader over the file: each path of the map reads it
// from its own offset.
func (f stored) upload() graphql.Upload {
	u := graphql.Upload{Filename: f.filename, ContentType: f.contentType, Size: f.size}
	if f.file != nil {
		u.File = io.NewSectionReader(f.file, 0, f.size)
	} else {
		u.File = bytes.NewReader(f.data)
	}
	return u
}

func (s *spool) add(part *multipart.Part) (stored, error) {
	st := stored{filename: part.FileName(), contentType: part.Header.Get("Content-Type")}
	room := max(s.maxMemory-s.used, 0)
	head, err := io.ReadAll(io.LimitReader(part, room+1))
	if err != nil {
		return st, err
	}
	if int64(len(head)) <= room {
		s.used += int64(len(head))
		st.data, st.size = head, int64(len(head))
		return st, nil
	}
	f, err := os.CreateTemp(s.gate.dir(), "fingraph-upload-")
	if err != nil {
		return st, errors.Join(errSpool, err)
	}
	s.temp = append(s.temp, f)
	st.file = f
	src := &readErr{r: io.MultiReader(bytes.NewReader(head), part)}
	st.size, err = io.Copy(&reservingWriter{f: f, s: s}, src)
	if errors.Is(err, errSpoolFull) {
		return st, err
	}
	if err != nil && src.err == nil {
		// Not the request's body: a write to the temporary file failed.
		err = errors.Join(errSpool, err)
	}
	return st, err
}

// readErr remembers the error of its reader, to tell it from the writer's.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

// errSpool marks a failure of the temporary file, not of the request.
var errSpool = errors.New("gqlhttp: the upload could not be spooled")

// reservingWriter writes to a temporary file what the gate's bound on
// temporary space lets it.
type reservingWriter struct {
	f *os.File
	s *spool
}

func (w *reservingWriter) Write(p []byte) (int, error) {
	if err := w.s.gate.reserve(int64(len(p))); err != nil {
		return 0, err
	}
	w.s.reserved += int64(len(p))
	return w.f.Write(p)
}

// remove closes and deletes the temporary files, and gives their space
// back to the gate.
func (s *spool) remove() {
	for _, f := range s.temp {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
	s.gate.unreserve(s.reserved)
	s.reserved = 0
}
