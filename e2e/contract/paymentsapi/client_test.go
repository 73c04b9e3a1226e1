package paymentsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/e2e/contract"
	"github.com/fingraph/fingraph/e2e/contract/paymentsapi"
	"github.com/fingraph/fingraph/upstream/sandbox"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// TestGeneratedClientCallsTheSandbox: a client generated from the committed
// payments document creates a customer with a card, lists customers and
// orders, and is refused in the document's error shape, against the real
// sandbox behind the contract validator.
func TestGeneratedClientCallsTheSandbox(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	sb.Seed()
	t.Cleanup(sb.Close)
	v, err := contract.Wrap(sb)
	require.NoError(t, err)
	srv := httptest.NewServer(v)
	t.Cleanup(srv.Close)

	bearer := func(key string) paymentsapi.ClientOption {
		return paymentsapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+key)
			r.Header.Set("Accept", "application/json")
			return nil
		})
	}
	c, err := paymentsapi.NewClientWithResponses(srv.URL+"/payments", bearer(paymentsim.PrivateKey))
	require.NoError(t, err)
	ctx := context.Background()

	in := paymentsapi.CreateCustomerJSONRequestBody{Number: "GEN-1"}
	in.Contact.Name, in.Contact.Email = "Generated Client", "gen@example.com"
	m := paymentsapi.MethodCreatable{Card: paymentsim.TokenOK + "generated", Type: "token"}
	m.Client.Browser = map[string]interface{}{"user_agent": "generated-client"}
	in.Method = append(in.Method, m)
	created, err := c.CreateCustomerWithResponse(ctx, in)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, created.StatusCode(), string(created.Body))
	require.NotNil(t, created.JSON201)
	require.NotNil(t, created.JSON201.Method)
	assert.Len(t, *created.JSON201.Method, 1)

	list, err := c.ListCustomersWithResponse(ctx)
	require.NoError(t, err)
	require.NotNil(t, list.JSON200)
	found := false
	for _, cu := range *list.JSON200 {
		found = found || (cu.Id != nil && *cu.Id == *created.JSON201.Id)
	}
	assert.True(t, found, "the new customer is listed")

	day := openapi_types.Date{Time: time.Now().UTC()}
	orders, err := c.ListOrdersWithResponse(ctx, &paymentsapi.ListOrdersParams{Start: &day, End: &day})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, orders.StatusCode(), string(orders.Body))

	missing, err := c.GetCustomerWithResponse(ctx, "no-such-customer")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, missing.StatusCode())
	require.NotNil(t, missing.JSONDefault, "the error body decodes as the document's Error")
	assert.NotEmpty(t, missing.JSONDefault.Error.Code)

	assert.Empty(t, v.Violations())
	assert.Equal(t, 4, v.Checked())
}
