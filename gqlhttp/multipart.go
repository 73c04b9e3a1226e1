package gqlhttp

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fingraph/fingraph/gqlerr"
)

// Multipart serves file uploads (the GraphQL multipart request spec:
// operations, map, then the files). gqlgen's transport reads every file
// before it looks at the operation, opens its temporary file once per path
// of the map (one file mapped to many paths holds as many descriptors until
// the request ends), keeps a chunked body of any size in memory, and
// answers its refusals 422 without a code. This one reads operations and
// map first and bounds them, finds the operation and checks that every
// path of the map names one of its Upload inputs, asks its Gate whether
// the session may run it and whether an upload more may run now, and only
// then reads the files: each at most once, into memory within MaxMemory
// and beyond it into one temporary file, shared by its paths.
type Multipart struct {
	// Schema is the schema the map's paths are checked against.
	Schema *ast.Schema
	// MaxBytes bounds the whole request (413 beyond it).
	MaxBytes int64
	// MaxOperationsBytes bounds the operations part.
	MaxOperationsBytes int64
	// MaxMemory bounds what of the files is held in memory; the rest goes
	// to temporary files, removed when the request ends.
	MaxMemory int64
	// MaxFiles bounds the files of one request, MaxPaths the paths of the
	// map, all files together.
	MaxFiles, MaxPaths int
	// Gate, when set, admits a request once its operation is known and
	// before its files are read, and bounds where and how much they are
	// spooled.
	Gate *UploadGate
}

var _ graphql.Transport = Multipart{}

// maxMapBytes bounds the map part: MaxPaths paths of a few hundred bytes.
const maxMapBytes = 64 << 10

// Supports implements graphql.Transport.
func (Multipart) Supports(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get("Upgrade") == "" && mediaType(r) == "multipart/form-data"
}

// Do implements graphql.Transport.
func (t Multipart) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	if t.MaxBytes > 0 {
		if r.ContentLength > t.MaxBytes {
			writeRequestError(w, http.StatusRequestEntityTooLarge, "the upload is too large")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, t.MaxBytes)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeRequestError(w, http.StatusBadRequest, "the multipart body is malformed")
		return
	}
	params := &graphql.RawParams{}
	body, status, msg := readPart(mr, "operations", t.MaxOperationsBytes)
	if msg == "" {
		status, msg = checkParams(body, params)
	}
	if msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	body, status, msg = readPart(mr, "map", maxMapBytes)
	if msg != "" {
		writeRequestError(w, status, msg)
		return
	}
	fileMap := map[string][]string{}
	if err := decodeObject(bytes.NewReader(body), &fileMap); err != nil || bytes.TrimSpace(body)[0] != '{' {
		writeRequestError(w, http.StatusBadRequest, "the map part must be a JSON object of file keys to lists of paths")
		return
	}
	paths := 0
	for _, p := range fileMap {
		if len(p) == 0 {
			writeRequestError(w, http.StatusBadRequest, "every file of the map needs at least one path")
			return
		}
		paths += len(p)
	}
	if len(fileMap) > t.MaxFiles || paths > t.MaxPaths {
		writeRequestError(w, http.StatusBadRequest, "at most "+strconv.Itoa(t.MaxFiles)+" files and "+strconv.Itoa(t.MaxPaths)+" paths in one request")
		return
	}

	// The operation is found and checked with stand-ins for the files,
	// before a byte of them is read.
	for _, list := range fileMap {
		for _, p := range list {
			if !setVariable(params.Variables, p, graphql.Upload{File: bytes.NewReader(nil)}) {
				writeRequestError(w, http.StatusBadRequest, "a path of the map does not name a variable of the operation")
				return
			}
		}
	}
	params.Headers = r.Header
	oc, errs := exec.CreateOperationContext(r.Context(), params)
	if oc != nil && oc.Operation != nil {
		if !takesUpload(t.Schema, oc.Operation) {
			writeRequestError(w, http.StatusBadRequest, "this operation takes no file; send it as application/json")
			return
		}
		for _, list := range fileMap {
			for _, p := range list {
				if !uploadAt(t.Schema, oc.Operation, p) {
					writeRequestError(w, http.StatusBadRequest, "a path of the map does not name an Upload input of the operation")
					return
				}
			}
		}
	}
	if errs != nil {
		writeOperationErrors(w, r, exec, oc, errs)
		return
	}
	// Whatever would refuse the operation at execution refuses it now,
	// before a byte of its files is read or kept.
	if !t.Gate.authorize(w, r, oc.Operation) {
		return
	}
	release, ok := t.Gate.admit(w, r)
	if !ok {
		return
	}
	files := &spool{maxMemory: t.MaxMemory, gate: t.Gate}
	defer files.remove()
	// Its place is given back before its files are removed, so that
	// whoever sees the files gone finds the place free.
	defer release()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			writeRequestError(w, readStatus(err), "the multipart body is malformed")
			return
		}
		list, ok := fileMap[part.FormName()]
		if !ok {
			writeRequestError(w, http.StatusBadRequest, "a file part is not in the map, or comes twice")
			return
		}
		delete(fileMap, part.FormName())
		f, err := files.add(part)
		if errors.Is(err, errSpoolFull) {
			refuseUpload(w, http.StatusServiceUnavailable, gqlerr.RateLimited, "the gateway is holding too many uploads; try again shortly")
			return
		}
		if errors.Is(err, errSpool) {
			gqlerr.WriteHTTP(w, http.StatusInternalServerError, gqlerr.Internal, "the upload could not be stored; try again")
			return
		}
		if err != nil {
			writeRequestError(w, readStatus(err), "the file could not be read")
			return
		}
		for _, p := range list {
			setVariable(params.Variables, p, f.upload())
		}
	}
	if len(fileMap) > 0 {
		writeRequestError(w, http.StatusBadRequest, "a file of the map is missing from the request")
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(w, r, exec, params, false, nil)
}

// readPart reads the next part, which must be the form field name, up to
// max bytes.
func readPart(mr *multipart.Reader, name string, max int64) ([]byte, int, string) {
	part, err := mr.NextPart()
	if err != nil {
		return nil, readStatus(err), "the multipart body is malformed"
	}
	if part.FormName() != name || part.FileName() != "" {
		return nil, http.StatusBadRequest, "the parts must be operations, then map, then the files"
	}
	b, err := io.ReadAll(io.LimitReader(part, max+1))
	if err != nil {
		return nil, readStatus(err), "the multipart body is malformed"
	}
	if int64(len(b)) > max {
		return nil, http.StatusRequestEntityTooLarge, "the " + name + " part is larger than the limit"
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, http.StatusBadRequest, "the " + name + " part is empty"
	}
	return b, 0, ""
}

// readStatus tells a body over the limit (413) from a malformed one.
func readStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// setVariable puts v at path ("variables.a.0.b") inside vars, through maps
// and lists that are already there; false when the path leads nowhere.
func setVariable(vars map[string]any, path string, v any) bool {
	rest, ok := strings.CutPrefix(path, "variables.")
	if !ok || vars == nil {
		return false
	}
	var cur any = vars
	segs := strings.Split(rest, ".")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[seg] = v
				return true
			}
			cur = c[seg]
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return false
			}
			if last {
				c[n] = v
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

const uploadScalar = "Upload"

// uploadAt reports whether path names an Upload of op's variables, through
// input object fields and list indexes.
func uploadAt(schema *ast.Schema, op *ast.OperationDefinition, path string) bool {
	segs := strings.Split(strings.TrimPrefix(path, "variables."), ".")
	v := op.VariableDefinitions.ForName(segs[0])
	if v == nil {
		return false
	}
	t := v.Type
	for _, seg := range segs[1:] {
		if t.Elem != nil {
			if _, err := strconv.Atoi(seg); err != nil {
				return false
			}
			t = t.Elem
			continue
		}
		def := schema.Types[t.NamedType]
		if def == nil || def.Kind != ast.InputObject {
			return false
		}
		f := def.Fields.ForName(seg)
		if f == nil {
			return false
		}
		t = f.Type
	}
	return t.Elem == nil && t.NamedType == uploadScalar
}

// takesUpload reports whether any variable of op reaches an Upload.
func takesUpload(schema *ast.Schema, op *ast.OperationDefinition) bool {
	seen := map[string]bool{}
	var reaches func(t *ast.Type) bool
	reaches = func(t *ast.Type) bool {
		for t.Elem != nil {
			t = t.Elem
		}
		if t.NamedType == uploadScalar {
			return true
		}
		if seen[t.NamedType] {
			return false
		}
		seen[t.NamedType] = true
		def := schema.Types[t.NamedType]
		if def == nil || def.Kind != ast.InputObject {
			return false
		}
		for _, f := range def.Fields {
			if reaches(f.Type) {
				return true
			}
		}
		return false
	}
	for _, v := range op.VariableDefinitions {
		if reaches(v.Type) {
			return true
		}
	}
	return false
}
