package resolvers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
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
