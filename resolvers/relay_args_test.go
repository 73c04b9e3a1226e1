package resolvers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/relay"
)

func TestUpstreamIDsRewritesGlobalIDsAndKeepsRawOnes(t *testing.T) {
	corp := relay.ID(relay.Corporation, "corp-1")
	wallet := relay.ID(relay.Wallet, "corp-1", "w-1")
	raw := "w-raw"
	var none *string
	require.NoError(t, upstreamIDs(context.Background(), arg(relay.Corporation, &corp), childArg(relay.Wallet, &wallet, &corp),
		arg(relay.Wallet, &raw), arg(relay.Card, none)))
	assert.Equal(t, "corp-1", corp)
	assert.Equal(t, "w-1", wallet)
	assert.Equal(t, "w-raw", raw, "a raw id is kept for compatibility")

	// Empty and malformed values are left to the resolver's own rules
	// (BAD_USER_INPUT for an empty id), as before global ids.
	empty := ""
	require.NoError(t, upstreamIDs(context.Background(), arg(relay.Card, &empty)))
	assert.Empty(t, empty)
}

func TestUpstreamIDsRefusesAnotherTypeOrAnotherCorporation(t *testing.T) {
	person := relay.ID(relay.Person, "p-1")
	err := upstreamIDs(context.Background(), arg(relay.Card, &person))
	e, ok := gqlerr.As(err)
	require.True(t, ok)
	assert.Equal(t, gqlerr.NotFound, e.Code)

	corp := "corp-2"
	limit := relay.ID(relay.Limit, "corp-1", "l-1")
	e, ok = gqlerr.As(upstreamIDs(context.Background(), arg(relay.Corporation, &corp), childArg(relay.Limit, &limit, &corp)))
	require.True(t, ok, "a limit of corp-1 named with corp-2")
	assert.Equal(t, gqlerr.NotFound, e.Code)

	ids := []string{relay.ID(relay.Wallet, "c", "a"), "b", relay.ID(relay.Card, "x")}
	assert.Error(t, upstreamIDList(context.Background(), relay.Wallet, ids))
	assert.Equal(t, []string{"a", "b"}, ids[:2])
}
