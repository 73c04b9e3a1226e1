package roundtrip

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// refusal is a client's typed error of a non-2xx answer.
type refusal struct{ rj Rejection }

func (r *refusal) Error() string        { return fmt.Sprintf("%s: %d", r.rj.Service, r.rj.Status) }
func (r *refusal) Rejection() Rejection { return r.rj }

// A typed check answers for the refusals of its own upstream only, through
// any wrapping.
func TestHasStatusIsOneUpstreamsCheck(t *testing.T) {
	err := fmt.Errorf("read order: %w", &refusal{Rejection{Service: "payments", Status: http.StatusNotFound}})
	assert.True(t, HasStatus(err, "payments", http.StatusNotFound))
	assert.True(t, HasStatus(err, "payments", http.StatusConflict, http.StatusNotFound))
	assert.False(t, HasStatus(err, "banking", http.StatusNotFound), "another upstream's refusal")
	assert.False(t, HasStatus(err, "payments", http.StatusConflict))
	assert.False(t, HasStatus(&UnavailableError{Service: "payments", Op: "GET /x", Err: ErrCircuitOpen}, "payments", http.StatusNotFound))
	assert.False(t, HasStatus(nil, "payments", http.StatusNotFound))
}
