package resolvers

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/idempotency"
)

// TestIdempotencyKeyIsCheckedInOnePlace: absent is no key; empty, blank or
// too long is BAD_USER_INPUT on input.idempotencyKey, never "no key".
func TestIdempotencyKeyIsCheckedInOnePlace(t *testing.T) {
	k, err := idempotencyKey(nil)
	require.NoError(t, err)
	assert.Empty(t, k)
	k, err = idempotencyKey(ptr(" k-1 "))
	require.NoError(t, err)
	assert.Equal(t, " k-1 ", k, "a key is the client's text as it is")
	for _, bad := range []string{"", " ", "\t\n", strings.Repeat("k", maxIdempotencyKey+1)} {
		_, err := idempotencyKey(&bad)
		var ge *gqlerr.Error
		require.ErrorAs(t, err, &ge, "%q", bad)
		assert.Equal(t, gqlerr.BadUserInput, ge.Code, "%q", bad)
		assert.Equal(t, "input.idempotencyKey", ge.Field, "%q", bad)
	}
}

// TestRetryHintsSayOnlyWhatIsTrue: a busy lane's retryAfter is when it
// frees; retryable is true only where a retry with the key can still tell.
func TestRetryHintsSayOnlyWhatIsTrue(t *testing.T) {
	var ge *gqlerr.Error
	require.ErrorAs(t, keyError(&idempotency.LaneBusy{Until: time.Now().Add(29500 * time.Millisecond)}), &ge)
	assert.Equal(t, gqlerr.RateLimited, ge.Code)
	assert.Equal(t, 30, ge.RetryAfter, "the lane frees in 29.5 s")

	for _, c := range []struct {
		u    idempotency.Unknown
		want bool
	}{
		{idempotency.Unknown{Keyed: true}, true},
		{idempotency.Unknown{Keyed: true, Final: true}, false},
		{idempotency.Unknown{Keyed: false, Final: true}, false},
	} {
		u := c.u
		e := errOutcomeUnknown(&u)
		assert.Equal(t, gqlerr.OutcomeUnknown, e.Code)
		assert.Equal(t, c.want, e.Extensions["retryable"], "%+v", c.u)
	}
}
