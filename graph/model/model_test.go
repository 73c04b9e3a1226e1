package model_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
)

func TestDateReadsOnlyYYYYMMDD(t *testing.T) {
	for _, v := range []any{"2030-02-30", "2030-2-1", "30.01.2030", "2030-01-01T00:00:00Z", "", 20300101, nil} {
		var d model.Date
		err := d.UnmarshalGQL(v)
		e, ok := gqlerr.As(err)
		require.True(t, ok, "%v: want a client error, got %v", v, err)
		assert.Equal(t, gqlerr.BadUserInput, e.Code, "%v", v)
	}
	var d model.Date
	require.NoError(t, d.UnmarshalGQL("2030-01-31"))
	assert.Equal(t, time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC), d.Time)
}

func TestDateWritesTheUTCDay(t *testing.T) {
	var b bytes.Buffer
	// 23:30 in UTC-2 is already the next day in UTC.
	model.Date{Time: time.Date(2030, 1, 31, 23, 30, 0, 0, time.FixedZone("", -2*3600))}.MarshalGQL(&b)
	assert.Equal(t, `"2030-02-01"`, b.String())
}
