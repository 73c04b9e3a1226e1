package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
)

// TestIdenticalQueriesAnswerEachSessionWithItsOwnView: identical queries
// sent at once may be answered by one execution (gqlhttp's operation
// sharing), but only within one session's view. Two sessions of different
// principals send the same query many times at once, interleaved: every
// answer is its own session's, and identical to what that session reads
// alone.
func TestIdenticalQueriesAnswerEachSessionWithItsOwnView(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	api, staff := g.signInAPI(t), g.signInStaff(t)
	const q = `{ viewer { kind } customers { id number contact { name } } }`
	alone := map[string]json.RawMessage{}
	for _, tok := range []string{api, staff} {
		r := g.queryAs(t, tok, q, nil)
		if len(r.Errors) > 0 {
			t.Fatalf("alone: %+v", r.Errors)
		}
		alone[tok] = r.Data
	}
	if bytes.Equal(alone[api], alone[staff]) {
		t.Fatal("the two views read the same: the test cannot tell them apart")
	}
	body, _ := json.Marshal(map[string]any{"query": q})
	const each = 12
	var wg sync.WaitGroup
	for i := range 2 * each {
		tok := []string{api, staff}[i%2]
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := g.http.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var r gqlResponse
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
				t.Errorf("answer: %v %+v", err, r.Errors)
				return
			}
			if !bytes.Equal(r.Data, alone[tok]) {
				t.Errorf("a session read %s, want its own view %s", r.Data, alone[tok])
			}
		})
	}
	wg.Wait()
}
