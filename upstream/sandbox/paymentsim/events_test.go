package paymentsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

const at = paymentsim.AccessToken

func TestWebhookRegistration(t *testing.T) {
	e := newEnv(t, false)
	for _, u := range []string{"http://example.com/hook", "ftp://example.com/x", "not a url", "http://10.0.0.1/hook"} {
		r := e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": u})
		require.Equal(t, 400, r.status, u)
		eb := r.err(t)
		assert.Equal(t, "invalid_webhook_url", eb.Error.Code)
		assert.Equal(t, "url", eb.Error.Field)
	}
	r := e.call("POST", "/payments/v1/webhooks", at, map[string]any{})
	assert.Equal(t, "invalid_request", r.err(t).Error.Code)

	r = e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": "https://hooks.example.com/payments"})
	require.Equal(t, 201, r.status, "%s", r.body)
	var w struct{ ID, URL, CreatedAt string }
	require.NoError(t, json.Unmarshal(r.body, &struct {
		ID        *string `json:"id"`
		URL       *string `json:"url"`
		CreatedAt *string `json:"created_at"`
	}{&w.ID, &w.URL, &w.CreatedAt}))
	assert.Equal(t, "https://hooks.example.com/payments", w.URL)
	assert.NotEmpty(t, w.CreatedAt)

	r = e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": "https://other.example.com/"})
	require.Equal(t, 409, r.status)
	assert.Equal(t, "webhook_exists", r.err(t).Error.Code)

	var list []map[string]any
	e.call("GET", "/payments/v1/webhooks", at, nil).json(t, &list)
	require.Len(t, list, 1)
	assert.Equal(t, w.ID, list[0]["id"])

	assert.Equal(t, 404, e.call("DELETE", "/payments/v1/webhooks/nope", at, nil).status)
	r = e.call("DELETE", "/payments/v1/webhooks/"+w.ID, at, nil)
	assert.Equal(t, 204, r.status)
	assert.Empty(t, r.body)
	e.call("GET", "/payments/v1/webhooks", at, nil).json(t, &list)
	assert.Empty(t, list)

	for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost:8080/webhooks/payments", "http://[::1]:80/x"} {
		r = e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": u})
		require.Equal(t, 201, r.status, "loopback http is a sandbox exception: %s", u)
		var h struct{ ID string }
		r.json(t, &h)
		require.Equal(t, 204, e.call("DELETE", "/payments/v1/webhooks/"+h.ID, at, nil).status)
	}
}

type delivery struct {
	EventID string `json:"event_id"`
	Name    string `json:"name"`
	URL     string `json:"url"`
	Attempt int    `json:"attempt"`
	Status  int    `json:"status"`
	Error   string `json:"error"`
	At      string `json:"at"`
}

func (e *env) deliveries() []delivery {
	var d []delivery
	e.call("GET", "/_sandbox/deliveries", "", nil).json(e.t, &d)
	return d
}

// receiver answers the listed statuses in turn, then 200, and records bodies.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	bodies   []map[string]any
	times    []time.Time
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, m)
	rc.times = append(rc.times, time.Now())
	status := 200
	if len(rc.statuses) > 0 {
		status, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

func TestWebhookDeliveryRetries(t *testing.T) {
	e := newEnv(t, false)
	rc := &receiver{statuses: []int{500, 502}}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	require.Equal(t, 201, e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": hook.URL + "/in"}).status)

	r, o := e.order(map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_wh")})
	require.Equal(t, 201, r.status)
	require.Eventually(t, func() bool { return rc.count() == 3 }, 3*time.Second, 5*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, 3, rc.count(), "no resend after a 2xx")

	rc.mu.Lock()
	body := rc.bodies[2]
	gap1, gap2 := rc.times[1].Sub(rc.times[0]), rc.times[2].Sub(rc.times[1])
	rc.mu.Unlock()
	assert.Len(t, body, 3, "only id, name, createdAt: %v", body)
	assert.Equal(t, "OrderCreated", body["name"])
	assert.NotEmpty(t, body["createdAt"])
	assert.GreaterOrEqual(t, gap1, 5*time.Millisecond, "first resend after 1 unit")
	assert.GreaterOrEqual(t, gap2, 10*time.Millisecond, "second resend after 2 units")

	// The event is read with GET on the id of the webhook body, v1 and v3.
	for _, v := range []string{"v1", "v3"} {
		var got eventJSON
		rr := e.call("GET", "/payments/"+v+"/events/"+body["id"].(string), at, nil)
		require.Equal(t, 200, rr.status)
		rr.json(t, &got)
		assert.Equal(t, "OrderCreated", got.Name)
		assert.Equal(t, o.ID, got.Payload["order_id"])
		assert.Equal(t, body["createdAt"], got.CreatedAt)
	}
	assert.Equal(t, 404, e.call("GET", "/payments/v1/events/nope", at, nil).status)

	d := e.deliveries()
	require.Len(t, d, 3)
	assert.Equal(t, []int{3, 2, 1}, []int{d[0].Attempt, d[1].Attempt, d[2].Attempt}, "newest first")
	assert.Equal(t, []int{200, 502, 500}, []int{d[0].Status, d[1].Status, d[2].Status})
	assert.Equal(t, hook.URL+"/in", d[0].URL)
	assert.Equal(t, body["id"], d[0].EventID)
	assert.NotEmpty(t, d[2].Error)
}

func TestWebhookGivesUpAfterFiveResends(t *testing.T) {
	e := newEnv(t, false)
	rc := &receiver{statuses: []int{500, 500, 500, 500, 500, 500, 500, 500}}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	require.Equal(t, 201, e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": hook.URL}).status)
	r, _ := e.order(map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_gu")})
	require.Equal(t, 201, r.status)
	// 1+2+4+8+16 = 31 units of 5 ms.
	require.Eventually(t, func() bool { return rc.count() == 6 }, 3*time.Second, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, 6, rc.count(), "the first send and five resends, no more")
}

func TestWebhook503SlowsDown(t *testing.T) {
	e := newEnv(t, false)
	rc := &receiver{statuses: []int{503}}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	require.Equal(t, 201, e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": hook.URL}).status)
	r, _ := e.order(map[string]any{"items": 100, "currency": "EUR", "payment": cardPayment("tok_ok_s")})
	require.Equal(t, 201, r.status)
	require.Eventually(t, func() bool { return rc.count() == 2 }, 3*time.Second, 5*time.Millisecond)
	rc.mu.Lock()
	gap := rc.times[1].Sub(rc.times[0])
	rc.mu.Unlock()
	assert.GreaterOrEqual(t, gap, 10*time.Millisecond, "1 unit of schedule plus 1 unit of slowdown")
}

func TestCloseStopsDelivery(t *testing.T) {
	sim := paymentsim.New(paymentsim.Options{RetryUnit: time.Second})
	r := chi.NewRouter()
	r.Route("/payments", sim.Routes)
	srv := httptest.NewServer(r)
	defer srv.Close()
	e := &env{t: t, sim: sim, srv: srv}
	var hits atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(500)
	}))
	defer hook.Close()
	require.Equal(t, 201, e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": hook.URL}).status)
	rr, _ := e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_close")})
	require.Equal(t, 201, rr.status)
	require.Eventually(t, func() bool { return hits.Load() == 1 }, 2*time.Second, 5*time.Millisecond)

	done := make(chan struct{})
	go func() {
		sim.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Close did not return while a resend was scheduled")
	}
	// Events after Close are stored but not delivered.
	rr, _ = e.order(map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_after_close")})
	require.Equal(t, 201, rr.status)
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, int32(1), hits.Load())
}

func TestEventListing(t *testing.T) {
	e := newEnv(t, true)
	all := e.events()
	require.NotEmpty(t, all)
	for i := 1; i < len(all); i++ {
		assert.LessOrEqual(t, all[i-1].CreatedAt, all[i].CreatedAt)
	}
	var page struct {
		Events  []eventJSON `json:"events"`
		HasMore bool        `json:"has_more"`
	}
	e.call("GET", "/payments/v1/events?limit=2&after="+all[0].ID, at, nil).json(t, &page)
	assert.True(t, page.HasMore)
	assert.Equal(t, []string{all[1].ID, all[2].ID}, []string{page.Events[0].ID, page.Events[1].ID})
	e.call("GET", "/payments/v1/events?after="+all[len(all)-1].ID, at, nil).json(t, &page)
	assert.Empty(t, page.Events)
	assert.False(t, page.HasMore)
	for _, q := range []struct{ q, field string }{{"?after=nope", "after"}, {"?limit=0", "limit"}, {"?limit=501", "limit"}} {
		r := e.call("GET", "/payments/v1/events"+q.q, at, nil)
		require.Equal(t, 400, r.status)
		assert.Equal(t, q.field, r.err(t).Error.Field)
	}
	assert.Empty(t, e.deliveries(), "seeding sends no webhooks")
}

func TestOnboardingFlow(t *testing.T) {
	e := newEnv(t, false)
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	defer hook.Close()
	require.Equal(t, 201, e.call("POST", "/payments/v1/webhooks", at, map[string]any{"url": hook.URL}).status)

	var ind struct{ ID, Status string }
	r := e.call("POST", "/_sandbox/individuals", "", nil)
	require.Equal(t, 201, r.status)
	r.json(t, &ind)
	assert.Equal(t, "onboarding_requested", ind.Status)

	var waiting []map[string]any
	e.call("GET", "/payments/v3/individuals?status=onboarding_requested", at, nil).json(t, &waiting)
	require.Len(t, waiting, 1)
	assert.Equal(t, ind.ID, waiting[0]["id"])

	var ob struct{ ID, Status, FormURL string }
	r = e.call("POST", "/payments/individuals/"+ind.ID+"/onboard", at, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.NoError(t, json.Unmarshal(r.body, &struct {
		ID      *string `json:"id"`
		Status  *string `json:"status"`
		FormURL *string `json:"form_url"`
	}{&ob.ID, &ob.Status, &ob.FormURL}))
	assert.Equal(t, "onboarding_requested", ob.Status)
	assert.Equal(t, e.srv.URL+"/_sandbox/individuals/"+ind.ID+"/form", ob.FormURL)
	assert.Equal(t, 200, e.call("POST", "/payments/individuals/"+ind.ID+"/onboard", paymentsim.PrivateKey, nil).status)

	// Activation before data is provided is an invalid move.
	assert.Equal(t, 409, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/activate", "", nil).status)
	require.Equal(t, 200, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/submit", "", nil).status)
	r = e.call("POST", "/payments/individuals/"+ind.ID+"/onboard", at, nil)
	require.Equal(t, 409, r.status)
	assert.Equal(t, "invalid_transition", r.err(t).Error.Code)
	assert.Equal(t, 409, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/submit", "", nil).status)
	require.Equal(t, 200, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/activate", "", nil).status)
	require.Equal(t, 200, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/block", "", `{"reason":"fraud_suspected"}`).status)
	assert.Equal(t, 409, e.call("POST", "/_sandbox/individuals/"+ind.ID+"/activate", "", nil).status)
	assert.Equal(t, 404, e.call("POST", "/payments/individuals/nope/onboard", at, nil).status)

	var blocked []map[string]any
	e.call("GET", "/payments/v3/individuals?status=blocked", at, nil).json(t, &blocked)
	require.Len(t, blocked, 1)

	var names []string
	var blockedPayload map[string]any
	for _, x := range e.events() {
		names = append(names, x.Name)
		assert.Equal(t, ind.ID, x.Payload["individual_id"])
		if x.Name == "IndividualBlocked" {
			blockedPayload = x.Payload
		}
	}
	assert.Equal(t, []string{"IndividualOnboardingDataProvided", "PendingActionCreated", "IndividualActivated", "IndividualBlocked"}, names)
	assert.Equal(t, "fraud_suspected", blockedPayload["reason"])
	require.Eventually(t, func() bool { return rc.count() == 4 }, 2*time.Second, 5*time.Millisecond)
	rc.mu.Lock()
	var hooked []string
	for _, b := range rc.bodies {
		hooked = append(hooked, b["name"].(string))
	}
	rc.mu.Unlock()
	sort.Strings(hooked)
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	assert.Equal(t, sorted, hooked, "every event is announced")
}

type pendingActionJSON struct {
	ID           string  `json:"id"`
	IndividualID string  `json:"individual_id"`
	EventID      string  `json:"event_id"`
	Type         string  `json:"type"`
	Status       string  `json:"status"`
	CreatedAt    string  `json:"created_at"`
	CompletedAt  *string `json:"completed_at"`
}

func TestPendingActions(t *testing.T) {
	e := newEnv(t, false)
	var created eventJSON
	r := e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "PendingActionCreated"})
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &created)
	assert.Equal(t, "PendingActionCreated", created.Name)
	indID, _ := created.Payload["individual_id"].(string)
	paID, _ := created.Payload["pending_action_id"].(string)
	require.NotEmpty(t, indID)

	var pa pendingActionJSON
	r = e.call("GET", "/payments/v3/pending_actions?event_id="+created.ID, at, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &pa)
	assert.Equal(t, pendingActionJSON{ID: paID, IndividualID: indID, EventID: created.ID, Type: "consent", Status: "pending", CreatedAt: created.CreatedAt}, pa)

	r = e.call("POST", "/_sandbox/pending_actions/"+paID+"/complete", "", nil)
	require.Equal(t, 200, r.status)
	assert.Equal(t, 409, e.call("POST", "/_sandbox/pending_actions/"+paID+"/complete", "", nil).status)
	var completed eventJSON
	for _, x := range e.events() {
		if x.Name == "PendingActionCompleted" {
			completed = x
		}
	}
	assert.Equal(t, map[string]any{"individual_id": indID, "pending_action_id": paID}, completed.Payload)
	e.call("GET", "/payments/v3/pending_actions?event_id="+completed.ID, at, nil).json(t, &pa)
	assert.Equal(t, "completed", pa.Status)
	assert.Equal(t, created.ID, pa.EventID, "event_id is the creating event")
	require.NotNil(t, pa.CompletedAt)

	// A second action for the same individual; listing by individual gives both.
	r = e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "PendingActionCreated", "individual_id": indID})
	require.Equal(t, 200, r.status)
	var list []pendingActionJSON
	e.call("GET", "/payments/v3/pending_actions?individual_id="+indID, at, nil).json(t, &list)
	require.Len(t, list, 2)
	assert.Equal(t, []string{"completed", "pending"}, []string{list[0].Status, list[1].Status})

	var other eventJSON
	e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "IndividualActivated"}).json(t, &other)
	assert.Equal(t, 404, e.call("GET", "/payments/v3/pending_actions?event_id="+other.ID, at, nil).status)
	for _, q := range []string{"", "?event_id=a&individual_id=b"} {
		r := e.call("GET", "/payments/v3/pending_actions"+q, at, nil)
		require.Equal(t, 400, r.status)
		assert.Equal(t, "invalid_request", r.err(t).Error.Code)
	}
	assert.Equal(t, 404, e.call("GET", "/payments/v3/pending_actions?individual_id=nope", at, nil).status)
}

func TestTrigger(t *testing.T) {
	e := newEnv(t, false)
	cases := []struct {
		name      string
		indStatus string
		payload   []string
	}{
		{"IndividualOnboardingDataProvided", "onboarding_data_provided", []string{"individual_id"}},
		{"IndividualActivated", "active", []string{"individual_id"}},
		{"IndividualBlocked", "blocked", []string{"individual_id", "reason"}},
		{"PendingActionCreated", "onboarding_data_provided", []string{"individual_id", "pending_action_id"}},
		{"PendingActionCompleted", "onboarding_data_provided", []string{"individual_id", "pending_action_id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": c.name})
			require.Equal(t, 200, r.status, "%s", r.body)
			var got eventJSON
			r.json(t, &got)
			assert.Equal(t, c.name, got.Name)
			var keys []string
			for k := range got.Payload {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			assert.Equal(t, c.payload, keys)
			var stored eventJSON
			e.call("GET", "/payments/v3/events/"+got.ID, at, nil).json(t, &stored)
			assert.Equal(t, got, stored)
			var inds []map[string]any
			e.call("GET", "/payments/v3/individuals?status="+c.indStatus, at, nil).json(t, &inds)
			found := false
			for _, ind := range inds {
				found = found || ind["id"] == got.Payload["individual_id"]
			}
			assert.True(t, found, "individual moved to %s", c.indStatus)
		})
	}
	// Order events go through the real flow: OrderRefunded is preceded by
	// the order's creation and capture.
	var refunded eventJSON
	r := e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "OrderRefunded"})
	require.Equal(t, 200, r.status)
	r.json(t, &refunded)
	assert.Equal(t, "OrderRefunded", refunded.Name)
	assert.Equal(t, "refunded", refunded.Payload["status"])
	assert.EqualValues(t, 1250, refunded.Payload["amount"])

	r = e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "OrderShipped"})
	require.Equal(t, 400, r.status)
	assert.Equal(t, "name", r.err(t).Error.Field)
}

func TestOpenAPIListsExactlyTheRoutes(t *testing.T) {
	sim := paymentsim.New(paymentsim.Options{})
	defer sim.Close()
	r := chi.NewRouter()
	sim.Routes(r)
	served := map[string]bool{}
	require.NoError(t, chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served[method+" "+route] = true
		return nil
	}))

	srv := httptest.NewServer(r)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/openapi.json")
	require.NoError(t, err)
	defer res.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&doc))
	assert.True(t, strings.HasPrefix(doc.OpenAPI, "3.0"))
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			documented[strings.ToUpper(m)+" "+p] = true
			var o struct {
				Security  []map[string]any          `json:"security"`
				Responses map[string]map[string]any `json:"responses"`
			}
			require.NoError(t, json.Unmarshal(op, &o))
			assert.NotEmpty(t, o.Responses, "%s %s", m, p)
		}
	}
	assert.Equal(t, served, documented)
	assert.Contains(t, documented, "PATCH /v1/order")
	assert.Contains(t, documented, "GET /v3/pending_actions")
	assert.Contains(t, documented, "POST /individuals/{id}/onboard")
}

// TestThroughRootSandbox checks the mount points the root sandbox gives the
// payments emulator and its control routes.
func TestThroughRootSandbox(t *testing.T) {
	sb := sandbox.New(sandbox.Config{RetryUnit: 5 * time.Millisecond})
	defer sb.Close()
	sb.Seed()
	srv := httptest.NewServer(sb)
	defer srv.Close()
	e := &env{t: t, srv: srv}
	var me customerJSON
	r := e.call("GET", "/payments/v1/customer/me", paymentsim.DemoCustomerKey, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &me)
	assert.Equal(t, "C-1001", me.Number)
	r = e.call("POST", "/_sandbox/trigger", "", map[string]any{"name": "IndividualActivated"})
	assert.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, 200, e.call("GET", "/_sandbox/deliveries", "", nil).status)
}
