package resolvers

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// fakeService is what every fake upstream service shares: how often each
// of its methods was called, and the errors a test injects. A method's
// injected error is answered before the fake looks at its data, as an
// upstream refusal or outage would be, and the call still counts.
type fakeService struct {
	name string

	mu     sync.Mutex
	n      map[string]int
	next   map[string][]error
	always map[string]error

	// data guards the fake's records.
	data sync.Mutex
}

func newFakeService(name string) fakeService {
	return fakeService{name: name, n: map[string]int{}, next: map[string][]error{}, always: map[string]error{}}
}

// enter counts a call of method and returns the error injected for it.
func (f *fakeService) enter(method string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n[method]++
	if errs := f.next[method]; len(errs) > 0 {
		f.next[method] = errs[1:]
		return errs[0]
	}
	return f.always[method]
}

// calls is how often method was called.
func (f *fakeService) calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[method]
}

// total is how many calls the service got, all methods together.
func (f *fakeService) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.n {
		n += c
	}
	return n
}

// failNext makes the next call of method answer err (queued: call it
// twice for two failing calls).
func (f *fakeService) failNext(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next[method] = append(f.next[method], err)
}

// failAlways makes every call of method answer err; nil heals it.
func (f *fakeService) failAlways(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.always, method)
		return
	}
	f.always[method] = err
}

// Errors a test injects, shaped as the clients return them.

// bankingRejection is a refusal of the banking upstream: its status, and
// one error item with the spec's code and the field it names.
func bankingRejection(status, code int, field, message string) error {
	return &banking.ErrorResponse{StatusCode: status, Method: http.MethodPost, Path: "/fake",
		Errors: []banking.ErrorItem{{Field: field, Message: message, Code: code}}}
}

// bankingNotFound is the banking upstream's 404.
func bankingNotFound() error {
	return &banking.ErrorResponse{StatusCode: http.StatusNotFound, Method: http.MethodGet, Path: "/fake",
		Errors: []banking.ErrorItem{{Message: "not found"}}}
}

// paymentsRejection is a refusal of the payments upstream.
func paymentsRejection(status int, code, field, message string) error {
	return &payments.ErrorResponse{StatusCode: status, Code: code, Field: field, Message: message}
}

// paymentsNotFound is the payments upstream's 404.
func paymentsNotFound() error {
	return &payments.ErrorResponse{StatusCode: http.StatusNotFound, Code: "not_found", Message: "not found"}
}

// unavailable is an upstream that did not answer (refused connection,
// timeout, open breaker), as roundtrip reports it.
func unavailable(service string) error {
	return &roundtrip.UnavailableError{Service: service, Op: "GET /fake", Err: errors.New("connection refused")}
}

// deferred makes a roundtrip.Deferred holding v, as a decoded answer would.
func deferred[T any](v T) roundtrip.Deferred[T] {
	var d roundtrip.Deferred[T]
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		panic(err)
	}
	return d
}

// page cuts one page of a listing as the banking upstream does: limit
// records from offset, with meta saying whether more remain.
func page[T any](all []T, opts *banking.ListOptions) ([]T, banking.Meta) {
	limit, offset := 20, 0
	if opts != nil {
		if opts.Limit > 0 {
			limit = opts.Limit
		}
		offset = opts.Offset
	}
	if offset > len(all) {
		offset = len(all)
	}
	end := min(offset+limit, len(all))
	out := append([]T(nil), all[offset:end]...)
	return out, banking.Meta{NumberOfRecords: len(all), Limit: limit, HasMore: end < len(all)}
}
