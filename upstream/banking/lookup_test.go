package banking

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsSEPAEnabled(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{"is_sepa_enabled_iban": s.Query.Get("iban") == "DK50 0040 0440 1162 43"})
	})
	ok, err := c.Lookup.IsSEPAEnabled(t.Context(), "w1", "DK50 0040 0440 1162 43")
	require.NoError(t, err)
	assert.True(t, ok)
	got := f.last(t)
	assert.Equal(t, "GET /banking/v2/lookup/ibans/is-sepa-enabled", got.Method+" "+got.Path)
	assert.Equal(t, "w1", got.Query.Get("source_id"))

	ok, err = c.Lookup.IsSEPAEnabled(t.Context(), "w1", "XX00&iban=DK50")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, []string{"XX00&iban=DK50"}, f.last(t).Query["iban"], "values are query-escaped")
}

func TestFeedbackSendsNoPassword(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{}) })
	err := c.Feedback.Send(t.Context(), &FeedbackRequest{Name: "N", Email: "n@x.test", Subject: "S", Feedback: "great", Captcha: "cap"})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "POST /banking/v2/feedback", got.Method+" "+got.Path)
	assert.JSONEq(t, `{"name":"N","email":"n@x.test","subject":"S","feedback":"great","recaptcha":"cap"}`, string(got.Raw))
}
