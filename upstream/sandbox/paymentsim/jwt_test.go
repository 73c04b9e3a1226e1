package paymentsim_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// verifyToken checks a signed order token against the published JWKS only.
func verifyToken(t *testing.T, e *env, tok string) jwt.MapClaims {
	t.Helper()
	r := e.call("GET", "/payments/.well-known/jwks.json", "", nil)
	require.Equal(t, 200, r.status)
	var set struct {
		Keys []struct{ Kty, Crv, X, Kid, Alg, Use string } `json:"keys"`
	}
	r.json(t, &set)
	require.Len(t, set.Keys, 1)
	k := set.Keys[0]
	require.Equal(t, []string{"OKP", "Ed25519", "EdDSA", "sig"}, []string{k.Kty, k.Crv, k.Alg, k.Use})
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	require.NoError(t, err)
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(tok, claims, func(tk *jwt.Token) (any, error) {
		assert.Equal(t, k.Kid, tk.Header["kid"])
		return ed25519.PublicKey(x), nil
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuer(paymentsim.Issuer), jwt.WithIssuedAt())
	require.NoError(t, err)
	return claims
}

func TestOrderTokensVerifyWithJWKS(t *testing.T) {
	e := newEnv(t, false)
	r := e.call("POST", "/payments/v1/customer", paymentsim.PublicKey, map[string]any{
		"number": "J-1", "contact": map[string]any{"name": "J", "email": "j@example.com"},
		"method": []any{methodCreatable("tok_ok_j")},
		"order":  map[string]any{"number": "JO-1", "items": 4200, "currency": "EUR"},
	})
	require.Equal(t, 201, r.status, "%s", r.body)
	var c customerJSON
	r.json(t, &c)
	var tok string
	require.NoError(t, jsonUnmarshal(c.Order, &tok))
	claims := verifyToken(t, e, tok)
	o := claims["order"].(map[string]any)
	assert.Equal(t, "JO-1", o["number"])
	assert.Equal(t, c.ID, o["customer"])
	assert.Equal(t, 4200.0, o["amount"])

	// A token from another sandbox (another key) does not verify.
	other := newEnv(t, false)
	r = other.callH("POST", "/payments/v1/order", paymentsim.PrivateKey,
		map[string]any{"items": 1, "currency": "EUR", "payment": cardPayment("tok_ok_o")}, nil)
	require.Equal(t, 201, r.status)
	x := e.call("GET", "/payments/.well-known/jwks.json", "", nil)
	var set struct {
		Keys []struct{ X string } `json:"keys"`
	}
	x.json(t, &set)
	pub, _ := base64.RawURLEncoding.DecodeString(set.Keys[0].X)
	_, err := jwt.Parse(string(r.body), func(*jwt.Token) (any, error) { return ed25519.PublicKey(pub), nil })
	assert.Error(t, err)

	// Without Accept: application/json the order list holds signed tokens.
	r = e.callH("GET", "/payments/v1/order", paymentsim.PrivateKey, nil, nil)
	var toks []string
	r.json(t, &toks)
	require.Len(t, toks, 1)
	assert.Equal(t, "JO-1", verifyToken(t, e, toks[0])["order"].(map[string]any)["number"])
}
