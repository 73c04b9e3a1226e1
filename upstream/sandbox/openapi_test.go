package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite docs/openapi/*.json from what the sandbox serves")

// served fetches a document from a running sandbox, indented the way the
// committed copy is.
func served(t *testing.T, base, path string) []byte {
	t.Helper()
	res, err := http.Get(base + path)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, path)
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, bytes.TrimSpace(raw), "", "  "))
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestOpenAPIDocumentsCommittedAndValid checks that each served document is
// valid OpenAPI 3.0 and equals its committed copy under docs/openapi (run with
// -update-openapi to rewrite the copies after a route or schema change).
func TestOpenAPIDocumentsCommittedAndValid(t *testing.T) {
	base := start(t)
	for _, name := range []string{"payments", "banking"} {
		t.Run(name, func(t *testing.T) {
			got := served(t, base, "/"+name+"/openapi.json")
			file := filepath.Join("..", "..", "docs", "openapi", name+".json")
			if *updateOpenAPI {
				require.NoError(t, os.WriteFile(file, got, 0o644))
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test ./upstream/sandbox -run TestOpenAPI -update-openapi")
			assert.Equal(t, string(want), string(got), "%s is stale: run go test ./upstream/sandbox -run TestOpenAPI -update-openapi", file)

			loader := openapi3.NewLoader()
			doc, err := loader.LoadFromData(got)
			require.NoError(t, err)
			require.NoError(t, doc.Validate(context.Background()))
			ids := map[string]bool{}
			for p, item := range doc.Paths.Map() {
				for m, op := range item.Operations() {
					require.NotEmpty(t, op.OperationID, "%s %s", m, p)
					assert.False(t, ids[op.OperationID], "duplicate operationId %s", op.OperationID)
					ids[op.OperationID] = true
					assert.NotNil(t, op.Responses.Default(), "%s %s has no error response", m, p)
				}
			}
		})
	}
}

// TestBankingOpenAPIMatchesRoutes checks that every banking route chi serves
// has an operation in the document and the other way round.
func TestBankingOpenAPIMatchesRoutes(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	t.Cleanup(sb.Close)
	r := chi.NewRouter()
	sb.Banking.Routes(r)
	served := map[string]bool{}
	require.NoError(t, chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if strings.HasPrefix(route, "/v2/") {
			served[method+" "+strings.TrimPrefix(route, "/v2")] = true
		}
		return nil
	}))
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	doc, err := openapi3.NewLoader().LoadFromData(served2(t, srv.URL))
	require.NoError(t, err)
	documented := map[string]bool{}
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			documented[m+" "+p] = true
		}
	}
	assert.Equal(t, served, documented)
	assert.Contains(t, documented, "POST /cards/issue")
	assert.Contains(t, documented, "GET /lookup/ibans/is-sepa-enabled")
}

func served2(t *testing.T, base string) []byte { return served(t, base, "/banking/openapi.json") }

// TestStrictServesOnlyWhatTheSpecShows: in strict mode the additions answer
// 404 (meta[offset] 400) and leave the documents, which stay valid.
func TestStrictServesOnlyWhatTheSpecShows(t *testing.T) {
	sb := sandbox.New(sandbox.Config{Strict: true})
	sb.Seed()
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	for _, p := range []string{"/payments/v1/events", "/payments/v3/individuals", "/payments/.well-known/jwks.json"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
		req.Header.Set("Authorization", "Bearer "+paymentsim.AccessToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusNotFound, res.StatusCode, p)
	}
	code, _ := do(t, http.MethodGet, srv.URL+"/payments/v1/customer", "")
	assert.Equal(t, http.StatusOK, code, "what the spec shows is served")

	for _, name := range []string{"payments", "banking"} {
		doc, err := openapi3.NewLoader().LoadFromData(served(t, srv.URL, "/"+name+"/openapi.json"))
		require.NoError(t, err)
		require.NoError(t, doc.Validate(context.Background()))
		for p, item := range doc.Paths.Map() {
			for m, op := range item.Operations() {
				if p != "/openapi.json" { // the document describes the routes; it is not one of them
					assert.Nil(t, op.Extensions["x-sandbox-addition"], "%s %s", m, p)
				}
				for _, prm := range op.Parameters {
					assert.NotEqual(t, "meta[offset]", prm.Value.Name)
				}
			}
		}
	}
}
