package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// answerHold holds the sandbox's next answer to one route: the answer is
// made at once (it holds the data as it is then) and delivered only when
// the test releases it, as a slow network would.
type answerHold struct {
	method, path string
	mu           sync.Mutex
	armed        bool
	made         chan struct{}
	release      chan struct{}
}

func newAnswerHold(method, path string) *answerHold {
	return &answerHold{method: method, path: path, made: make(chan struct{}), release: make(chan struct{})}
}

func (h *answerHold) arm() { h.mu.Lock(); h.armed = true; h.mu.Unlock() }

func (h *answerHold) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		hold := h.armed && r.Method == h.method && r.URL.Path == h.path
		if hold {
			h.armed = false
		}
		h.mu.Unlock()
		if !hold {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		close(h.made)
		select {
		case <-h.release:
		case <-time.After(20 * time.Second):
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// TestAQueryReadsWhatWasWrittenBeforeItStarted: queries at the same time
// may share one upstream call, but a query never shares a call begun before
// it started. Here a customer listing begun before a contact change is
// still on its way when a query that starts after the change reads the
// listing: that query reads the change.
func TestAQueryReadsWhatWasWrittenBeforeItStarted(t *testing.T) {
	t.Parallel()
	hold := newAnswerHold(http.MethodGet, "/payments/v1/customer")
	g := startGatewayWith(t, sandboxBehind(hold.wrap))
	g = g.as(g.signInAPI(t))
	const listing = `{ customers { id contact { name email } } }`
	type customers struct {
		Customers []struct {
			ID      string
			Contact struct{ Name, Email string }
		}
	}
	var before customers
	g.query(t, listing, nil).decode(t, &before)
	if len(before.Customers) == 0 {
		t.Fatal("no seeded customers")
	}
	c := before.Customers[0]

	hold.arm()
	early := make(chan customers, 1)
	go func() {
		var out customers
		body, _ := json.Marshal(map[string]any{"query": listing})
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if g.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+g.bearer)
		}
		if resp, err := g.http.Do(req); err == nil {
			var r struct{ Data customers }
			_ = json.NewDecoder(resp.Body).Decode(&r)
			_ = resp.Body.Close()
			out = r.Data
		}
		early <- out
	}()
	select {
	case <-hold.made:
	case <-time.After(10 * time.Second):
		t.Fatal("the first listing never reached the sandbox")
	}

	const renamed = "Renamed While A Listing Was On Its Way"
	g.query(t, `mutation($input: UpdateCustomerContactInput!) { updateCustomerContact(input: $input) { contact { name } } }`,
		map[string]any{"input": map[string]any{"customerId": c.ID, "contact": map[string]any{"name": renamed, "email": c.Contact.Email}}}).
		decode(t, &struct{}{})
	// Had this query shared the held call, it would wait for it and fail
	// with the call's deadline.
	var after customers
	g.query(t, listing, nil).decode(t, &after)
	close(hold.release)

	nameOf := func(l customers) string {
		for _, x := range l.Customers {
			if x.ID == c.ID {
				return x.Contact.Name
			}
		}
		return "(absent)"
	}
	if got := nameOf(after); got != renamed {
		t.Errorf("a query begun after the change read %q, want %q", got, renamed)
	}
	// The held answer was made before the change: had the later query
	// shared its call, it would have read the old name.
	if got := nameOf(<-early); got != c.Contact.Name {
		t.Errorf("the listing begun before the change read %q, want the old %q", got, c.Contact.Name)
	}
}
