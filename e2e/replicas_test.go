package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// TestTwoReplicasShareSessionsAttemptsAndEvents runs two gateways against
// one external JetStream and one upstream, as a deployment that outgrew
// one machine: a session started on one replica works on the other, an
// order retried on the other keeps its upstream id, and a webhook received
// by one reaches a subscriber of the other.
func TestTwoReplicasShareSessionsAttemptsAndEvents(t *testing.T) {
	a, b := twoReplicas(t)

	// A session from replica A works on replica B.
	token := a.signInAPI(t)
	a, b = a.as(token), b.as(token)
	var v struct {
		Viewer struct{ Kind string } `json:"viewer"`
	}
	b.query(t, `{ viewer { kind } }`, nil).decode(t, &v)
	if v.Viewer.Kind != "API_CLIENT" {
		t.Fatalf("replica B does not know replica A's session: %+v", v)
	}

	// An order failed on A and retried on B is one upstream order.
	key := uniq("replicas-")
	input := func(tok string) map[string]any {
		return map[string]any{"idempotencyKey": key, "currency": "EUR", "items": map[string]any{"amount": 900},
			"payment": map[string]any{"card": map[string]any{"token": tok}}}
	}
	failed := createOrder(t, a, input(uniq("tok_fail_")))
	done := createOrder(t, b, input(uniq("tok_ok_")))
	if failed.OrderID == "" || done.ID != failed.OrderID {
		t.Fatalf("retry on the other replica: failed %+v, then %+v", failed, done)
	}

	// Replica A receives the upstream's webhooks; B's subscriber gets them.
	registerWebhook(t, a.SandboxURL, a.URL)
	ws := b.dialWS(t, nil, nil)
	ws.subscribeFromNow(b, "1", `subscription($after: String) { events(names: ["IndividualActivated"], after: $after) `+liveFields+` }`, nil)
	var ev sandboxEvent
	a.sandbox(t, http.MethodPost, "/_sandbox/trigger", map[string]any{"name": "IndividualActivated"}, &ev)
	if e := ws.next("1", "events"); e.Event.UpstreamID != ev.ID {
		t.Fatalf("replica B's subscriber: want %s, got %+v", ev.ID, e)
	}
}

// registerWebhook registers gateway's /webhooks/payments as the company's
// webhook at the sandbox (the upstream) under sandboxURL, as an operator
// would for a deployment whose gateways do not register it themselves.
func registerWebhook(t *testing.T, sandboxURL, gateway string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"url": gateway + "/webhooks/payments"})
	req, _ := http.NewRequest(http.MethodPost, sandboxURL+"/payments/v1/webhooks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+paymentsim.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("registering %s as the webhook: %d", gateway, resp.StatusCode)
	}
}

// startNATS starts one NATS server with JetStream on loopback, an external
// JetStream for the test's gateways; it stops when the test ends.
func startNATS(t *testing.T) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	return ns
}

// twoReplicas starts two gateways on one external JetStream and one
// upstream (a sandbox of their own), as a deployment that outgrew one machine.
func twoReplicas(t *testing.T, extraArgs ...string) (*testGateway, *testGateway) {
	t.Helper()
	ns := startNATS(t)
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	up := httptest.NewServer(validated(t, sb))
	t.Cleanup(func() { up.Close(); sb.Close() })

	replica := func() *testGateway {
		g := startGateway(t, append([]string{"-nats-url", ns.ClientURL(),
			"-payments-url", up.URL + "/payments", "-banking-url", up.URL + "/banking", "-payments-corporations", demoCorpID,
			"-payments-private-key", paymentsim.PrivateKey, "-payments-public-key", paymentsim.PublicKey,
			"-payments-access-token", paymentsim.AccessToken}, extraArgs...)...)
		g.SandboxURL = up.URL
		return g
	}
	return replica(), replica()
}

// Defects issue, item 2, across replicas: a sign-out served by one replica
// closes the session's socket on the other with 4401.
func TestSignOutOnOneReplicaClosesSocketsOnAnother(t *testing.T) {
	a, b := twoReplicas(t)
	token := a.signInAPI(t)
	a, b = a.as(token), b.as(token)
	ws := b.dialWS(t, nil, nil)
	ws.subscribeFromNow(b, "1", `subscription($after: String) { events(after: $after) `+liveFields+` }`, nil)
	a.query(t, `mutation { signOut }`, nil)
	code, msgs := ws.closeCode()
	if code != 4401 {
		t.Errorf("close code on the other replica %d, want 4401", code)
	}
	for _, m := range msgs {
		if m.Type == "next" {
			t.Errorf("an event reached an ended session: %s", m.Payload)
		}
	}
}

// TestTwoReplicasShareTheLimitsThatProtectAccounts: failed sign-ins and
// card credential reads count against one allowance whichever replica
// serves them, so two replicas allow what one does: the sixth failed
// sign-in of an account from one address, and a person's sixth credential
// read in a minute, are refused though each replica saw only three.
func TestTwoReplicasShareTheLimitsThatProtectAccounts(t *testing.T) {
	a, b := twoReplicas(t)
	replicas := []*testGateway{a, b}
	anna := a.signInPerson(t, "anna@demo.test")
	card := a.as(anna).issueCard(t, issueInput())
	for i := range 6 {
		r := replicas[i%2].as(anna).query(t, revealMutation, map[string]any{"id": card.ID})
		if limited := r.code() == "RATE_LIMITED"; limited != (i == 5) {
			t.Errorf("credential read %d (replica %d): %+v", i+1, i%2, r.Errors)
		}
	}

	for i := range 6 {
		r := signInAttempt(t, replicas[i%2], "anna@demo.test", "")
		if limited := r.code() == "RATE_LIMITED"; limited != (i == 5) {
			t.Errorf("failed sign-in %d (replica %d): %+v", i+1, i%2, r.Errors)
		}
	}
}

// TestTwoReplicasShareTheUploadCaps: a session's uploads in flight are
// capped across replicas: with two held open on one replica, a third on
// the other is refused before its file is read.
func TestTwoReplicasShareTheUploadCaps(t *testing.T) {
	dir := t.TempDir()
	a, b := twoReplicas(t, "-upload-dir", dir, "-limits", "uploadsPerSession=2")
	anna := a.signInPerson(t, "anna@demo.test")
	a.holdUpload(t, anna, 3<<20)
	a.holdUpload(t, anna, 3<<20)
	waitFor(t, "two uploads spooled on replica A", func() bool { n, _ := spooled(t, dir); return n == 2 })
	h := b.holdUpload(t, anna, 3<<20)
	if r := awaitAnswer(t, h, dir); r.status != http.StatusTooManyRequests || r.code != "RATE_LIMITED" {
		t.Errorf("the session's third upload, on replica B: %d %q %v, want 429 RATE_LIMITED", r.status, r.code, r.err)
	}
}
