package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// In trusted-documents mode only the manifest's operations run, by text or
// by hash; anything else is refused before it is parsed, introspection
// included.
func TestTrustedDocumentsRunOnlyRegisteredOperations(t *testing.T) {
	const viewer = `query Viewer { viewer { kind } }`
	hash := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	id := hash(viewer)
	manifest, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1,
		"operations": []map[string]any{
			{"id": id, "name": "Viewer", "type": "query", "body": viewer},
			{"id": hash(signInMutation), "name": "SignIn", "type": "mutation", "body": signInMutation},
		}})
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "-trusted-documents", path)
	g = g.as(g.signInAPI(t))

	var d struct {
		Viewer struct{ Kind string } `json:"viewer"`
	}
	g.query(t, viewer, nil).decode(t, &d)
	if d.Viewer.Kind != "API_CLIENT" {
		t.Errorf("a trusted document by text: %+v", d)
	}
	body, _ := json.Marshal(map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": id}}})
	r := g.raw(t, http.MethodPost, "application/json", body, http.Header{"Authorization": {"Bearer " + g.bearer}})
	if resp := r.decode(t); len(resp.Errors) > 0 {
		t.Errorf("a trusted document by hash: %s", r.Body)
	}
	for _, q := range []string{`{ viewer { kind } }`, `{ __schema { types { name } } }`, `query Viewer { viewer { kind person { id } } }`} {
		r := g.query(t, q, nil)
		if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["reason"] != "UNTRUSTED_DOCUMENT" {
			t.Errorf("%s: %+v", q, r.Errors)
		}
	}
}
