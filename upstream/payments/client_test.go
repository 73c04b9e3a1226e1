package payments_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// These tests run the client against the sandbox over real HTTP. The client
// does not know it is a sandbox; the tests do, to drive it.

var demoKeys = payments.Keys{Public: paymentsim.PublicKey, Private: paymentsim.PrivateKey, AccessToken: paymentsim.AccessToken}

func newSandbox(t *testing.T) string {
	t.Helper()
	sb := sandbox.New(sandbox.Config{RetryUnit: time.Millisecond})
	sb.Seed()
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	return srv.URL + "/payments"
}

func newClient(t *testing.T, base string, keys payments.Keys) *payments.Client {
	t.Helper()
	c, err := payments.NewClient(base, keys, roundtrip.WithTimeout(5*time.Second), roundtrip.WithBackoff(time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func upstreamErr(t *testing.T, err error, status int, code string) {
	t.Helper()
	pe, ok := payments.AsError(err)
	if !ok || pe.StatusCode != status || pe.Code != code {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
}

func TestWrongKeyKindIsRefused(t *testing.T) {
	base := newSandbox(t)
	ctx := context.Background()
	// A client misconfigured with the public key where the private key belongs.
	swapped := newClient(t, base, payments.Keys{Public: demoKeys.Public, Private: demoKeys.Public, AccessToken: demoKeys.Private})
	_, err := swapped.Customers.List(ctx)
	upstreamErr(t, err, http.StatusForbidden, "forbidden_key")
	_, err = swapped.Webhooks.List(ctx)
	upstreamErr(t, err, http.StatusForbidden, "forbidden_key")

	unknown := newClient(t, base, payments.Keys{Public: "pk_nope", Private: "sk_nope", AccessToken: "at_nope"})
	_, err = unknown.Customers.List(ctx)
	upstreamErr(t, err, http.StatusUnauthorized, "unauthorized")
	if strings.Contains(err.Error(), "sk_nope") {
		t.Errorf("error echoes the key: %v", err)
	}

	// A customer key reads only `me`.
	c := newClient(t, base, demoKeys)
	me, err := c.Customers.Get(payments.WithCustomerKey(ctx, paymentsim.DemoCustomerKey), "someone-else")
	if err != nil || me.Number != "C-1001" {
		t.Fatalf("customer key reads itself: %+v %v", me, err)
	}
}

func TestReorderThatChangesAMethodIsRefused(t *testing.T) {
	c := newClient(t, newSandbox(t), demoKeys)
	ctx := context.Background()
	cust, err := c.Customers.Create(ctx, payments.CustomerCreatable{Number: "R-1", Contact: payments.Contact{Name: "R", Email: "r@example.com"},
		Method: []payments.PaymentMethodCreatable{payments.NewPaymentMethodCreatable("tok_ok_r1", nil), payments.NewPaymentMethodCreatable("tok_ok_r2", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	methods, err := cust.Method.Decode()
	if err != nil || len(methods) != 2 {
		t.Fatalf("methods %+v: %v", methods, err)
	}
	changed := append([]payments.PaymentMethod(nil), methods...)
	changed[1].Last4 = "0000"
	_, err = c.Customers.SetMethods(ctx, cust.ID, changed)
	upstreamErr(t, err, http.StatusBadRequest, "method_changed")

	reordered, err := c.Customers.SetMethods(ctx, cust.ID, []payments.PaymentMethod{methods[1], methods[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := reordered.Method.Decode(); err != nil || len(got) != 2 || got[0].Token != methods[1].Token {
		t.Fatalf("reorder: %+v %v", got, err)
	}
}

func TestOrderTokensVerifyOnlyWithThePublishedKey(t *testing.T) {
	c := newClient(t, newSandbox(t), demoKeys)
	ctx := context.Background()
	cust, err := c.Customers.Create(ctx, payments.CustomerCreatable{Number: "T-1", Contact: payments.Contact{Name: "T", Email: "t@example.com"},
		Method: []payments.PaymentMethodCreatable{payments.NewPaymentMethodCreatable("tok_ok_t1", nil)},
		Order:  payments.OrderCreatable{Currency: "EUR", Items: payments.Items{Item: &payments.Item{Name: "x", Amount: 700}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !cust.Order.Single || len(cust.Order.Tokens) != 1 {
		t.Fatalf("one order object answers one token string: %+v", cust.Order)
	}
	o, err := c.OrderTokens.Verify(ctx, cust.Order.Tokens[0])
	if err != nil || o.Customer.ID != cust.ID {
		t.Fatalf("verify: %+v %v", o, err)
	}
	if items, err := o.Items.Decode(); err != nil || items.Total() != 700 {
		t.Fatalf("verified order's items: %+v %v", items, err)
	}

	// A token signed with any other key is refused, whatever its claims.
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	forged := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iat": time.Now().Unix(), "order": map[string]any{"id": "forged"}})
	parsed, _ := jwt.Parse(cust.Order.Tokens[0], nil)
	if parsed != nil {
		forged.Header["kid"] = parsed.Header["kid"]
	}
	tok, _ := forged.SignedString(other)
	if _, err := c.OrderTokens.Verify(ctx, tok); !errors.Is(err, payments.ErrInvalidOrderToken) {
		t.Errorf("forged token: want ErrInvalidOrderToken, got %v", err)
	}
	// Tampering with the payload breaks the signature.
	parts := strings.Split(cust.Order.Tokens[0], ".")
	tampered := parts[0] + "." + parts[1] + "x." + parts[2]
	if _, err := c.OrderTokens.Verify(ctx, tampered); !errors.Is(err, payments.ErrInvalidOrderToken) {
		t.Errorf("tampered token: want ErrInvalidOrderToken, got %v", err)
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"order": map[string]any{"id": "x"}})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := c.OrderTokens.Verify(ctx, noneTok); !errors.Is(err, payments.ErrInvalidOrderToken) {
		t.Errorf("unsigned token: want ErrInvalidOrderToken, got %v", err)
	}
}

func TestWebhookURLRulesAndEventListing(t *testing.T) {
	c := newClient(t, newSandbox(t), demoKeys)
	ctx := context.Background()
	_, err := c.Webhooks.Create(ctx, "http://hooks.example/payments")
	upstreamErr(t, err, http.StatusBadRequest, "invalid_webhook_url")
	w, err := c.Webhooks.Create(ctx, "https://127.0.0.1:1/hook")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Webhooks.Create(ctx, "https://127.0.0.1:2/hook")
	upstreamErr(t, err, http.StatusConflict, "webhook_exists")
	if err := c.Webhooks.Delete(ctx, w.ID); err != nil {
		t.Fatal(err)
	}

	page, err := c.Events.List(ctx, "", 5)
	if err != nil || len(page.Events) != 5 || !page.HasMore {
		t.Fatalf("first page: %+v %v", page, err)
	}
	next, err := c.Events.List(ctx, page.Events[4].ID, 500)
	if err != nil || len(next.Events) == 0 || next.Events[0].ID == page.Events[4].ID {
		t.Fatalf("next page: %+v %v", next, err)
	}
	ev, err := c.Events.Get(ctx, page.Events[0].ID)
	if err != nil || ev.Name != page.Events[0].Name {
		t.Fatalf("get event: %+v %v", ev, err)
	}
	_, err = c.Events.Get(ctx, "00000000-0000-0000-0000-000000000000")
	upstreamErr(t, err, http.StatusNotFound, "not_found")
}

// TestRetriesOnlyIdempotentCalls counts attempts on a server that fails.
func TestRetriesOnlyIdempotentCalls(t *testing.T) {
	var gets, posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		} else {
			posts.Add(1)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, demoKeys)
	ctx := context.Background()
	_, err := c.Customers.List(ctx)
	if pe, ok := payments.AsError(err); !ok || pe.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("GET against a failing server: want its 503, got %v", err)
	}
	_, _ = c.Orders.Create(ctx, payments.OrderCreatable{Currency: "EUR", Items: payments.Items{Number: new(int64)}})
	if gets.Load() != 3 || posts.Load() != 1 {
		t.Errorf("attempts: GET %d (want 3), POST %d (want 1)", gets.Load(), posts.Load())
	}
}

func TestCircuitBreakerOpensAfterRepeatedFailures(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, demoKeys)
	for i := 0; i < 2*roundtrip.DefaultTripAfter; i++ {
		_, _ = c.Orders.Create(context.Background(), payments.OrderCreatable{Currency: "EUR", Items: payments.Items{Number: new(int64)}})
	}
	if n := calls.Load(); n != roundtrip.DefaultTripAfter {
		t.Errorf("upstream saw %d calls; the breaker should open after %d consecutive failures", n, roundtrip.DefaultTripAfter)
	}
	_, err := c.Orders.Create(context.Background(), payments.OrderCreatable{Currency: "EUR", Items: payments.Items{Number: new(int64)}})
	if !errors.Is(err, roundtrip.ErrCircuitOpen) || !roundtrip.IsUnavailable(err) {
		t.Errorf("open breaker: want an UnavailableError of the open circuit, got %v", err)
	}
}

// owner records the refusals of the customer key it holds.
type owner struct{ refused atomic.Int32 }

func (o *owner) CustomerKeyRefused(context.Context) { o.refused.Add(1) }

// TestRefusalsNameWhoseKeyWasRefused: a refused customer key ends the
// session holding it (its owner is told); the merchant's own keys refused
// are the gateway's misconfiguration.
func TestRefusalsNameWhoseKeyWasRefused(t *testing.T) {
	for _, tc := range []struct {
		name          string
		status        int
		customer      bool
		told          int32
		refused       bool
		misconfigured bool
	}{
		{"customer key refused", http.StatusUnauthorized, true, 1, true, false},
		{"customer key forbidden", http.StatusForbidden, true, 0, false, false},
		{"merchant key refused", http.StatusUnauthorized, false, 0, false, true},
		{"merchant key of the wrong kind", http.StatusForbidden, false, 0, false, true},
		{"not found", http.StatusNotFound, true, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{"error":{"code":"nope","message":"refused"}}`))
			}))
			defer srv.Close()
			c := newClient(t, srv.URL, demoKeys)
			o := &owner{}
			ctx := context.Background()
			if tc.customer {
				ctx = payments.WithOwnedCustomerKey(ctx, "ck_x", o)
			}
			_, err := c.Customers.Get(ctx, "c1")
			rj, ok := roundtrip.AsRejection(err)
			if !ok || rj.Service != "payments" || rj.Status != tc.status || rj.Code != "nope" || rj.Message != "refused" {
				t.Fatalf("rejection %+v from %v", rj, err)
			}
			if rj.CredentialRefused != tc.refused || (rj.Misconfigured != "") != tc.misconfigured {
				t.Errorf("rejection %+v", rj)
			}
			if o.refused.Load() != tc.told {
				t.Errorf("owner told %d times, want %d", o.refused.Load(), tc.told)
			}
		})
	}
	// A key given without an owner (a sign-in trying it) tells nobody.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
	defer srv.Close()
	o := &owner{}
	ctx := payments.WithCustomerKey(payments.WithOwnedCustomerKey(context.Background(), "ck_old", o), "ck_new")
	if _, err := newClient(t, srv.URL, demoKeys).Customers.Get(ctx, "me"); err == nil || o.refused.Load() != 0 {
		t.Errorf("a replaced key's owner was told: %d, %v", o.refused.Load(), err)
	}
}

// A list is read into a slice with room for as many elements as the last
// list of its type had, so decoding does not grow it by doubling; the room
// is bounded, so one huge list does not make every later one as large.
func TestListsAreReadIntoRoomForTheLastLength(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		parts := make([]string, n.Load())
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"id":"c%d"}`, i)
		}
		_, _ = io.WriteString(w, "["+strings.Join(parts, ",")+"]")
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, demoKeys)
	list := func(size int) []payments.Customer {
		t.Helper()
		n.Store(int32(size))
		out, err := c.Customers.List(context.Background())
		if err != nil || len(out) != size {
			t.Fatalf("list of %d: %d, %v", size, len(out), err)
		}
		return out
	}
	list(40)
	if got := cap(list(40)); got != 40 {
		t.Errorf("a list of 40 after one of 40 has room for %d, want exactly 40 (no growth)", got)
	}
	list(500)
	if got := cap(list(1)); got != 128 {
		t.Errorf("a list of 1 after one of 500 has room for %d, want the bound, 128", got)
	}
}
