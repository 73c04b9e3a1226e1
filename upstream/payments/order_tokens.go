package payments

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// OrderTokensService verifies the signed order tokens the upstream answers
// customer and method creation with. A token is trusted only after its
// signature checks out against a key the upstream publishes.
type OrderTokensService service

// jwks caches the upstream's published signing keys by key id.
type jwks struct {
	mu      sync.Mutex
	keys    map[string]ed25519.PublicKey
	fetched time.Time
}

// jwksRefetchAfter bounds how often an unknown key id triggers a refetch, so
// forged tokens with random key ids cannot hammer the upstream.
const jwksRefetchAfter = 30 * time.Second

// ErrInvalidOrderToken means a token failed verification.
var ErrInvalidOrderToken = errors.New("payments: invalid signed order token")

// Verify checks the token's signature and returns the order it stands for.
func (s *OrderTokensService) Verify(ctx context.Context, token string) (*Order, error) {
	var claims struct {
		jwt.RegisteredClaims
		Order *Order `json:"order"`
	}
	var keyErr error
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, err := s.client.signingKey(ctx, kid)
		keyErr = err
		return key, err
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuedAt())
	if roundtrip.IsUnavailable(keyErr) {
		return nil, keyErr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidOrderToken, errors.Unwrap(err))
	}
	if claims.Order == nil || claims.Order.ID == "" {
		return nil, fmt.Errorf("%w: no order in the token", ErrInvalidOrderToken)
	}
	return claims.Order, nil
}

func (c *Client) signingKey(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	c.signing.mu.Lock()
	defer c.signing.mu.Unlock()
	if k, ok := c.signing.keys[kid]; ok {
		return k, nil
	}
	if !c.signing.fetched.IsZero() && time.Since(c.signing.fetched) < jwksRefetchAfter {
		return nil, fmt.Errorf("unknown signing key %q", kid)
	}
	keys, err := c.fetchKeys(ctx)
	if err != nil {
		return nil, err
	}
	c.signing.keys, c.signing.fetched = keys, time.Now()
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown signing key %q", kid)
}

// fetchKeys reads the published key set (a JWKS of Ed25519 keys).
func (c *Client) fetchKeys(ctx context.Context) (map[string]ed25519.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.jwksURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.send.UserAgent())
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	if err := c.Do(req, &set); err != nil {
		return nil, err
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			continue
		}
		keys[k.Kid] = ed25519.PublicKey(x)
	}
	return keys, nil
}

// SignedOrder is a signed order token with the order it stands for.
type SignedOrder struct {
	Token string
	Order *Order
}

// VerifyAll verifies every token, in order; one bad token fails them all.
func (s *OrderTokensService) VerifyAll(ctx context.Context, tokens []string) ([]SignedOrder, error) {
	out := make([]SignedOrder, 0, len(tokens))
	for _, t := range tokens {
		o, err := s.Verify(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, SignedOrder{Token: t, Order: o})
	}
	return out, nil
}

// ConfirmAll is VerifyAll for an upstream that publishes no signing key
// (the spec shows none; the strict sandbox serves none). A token's claims
// only say which order to look for: the order answered is the one the
// upstream's own order listing gives, over the authenticated connection,
// and a token whose order the listing does not have fails them all.
func (s *OrderTokensService) ConfirmAll(ctx context.Context, tokens []string) ([]SignedOrder, error) {
	out := make([]SignedOrder, 0, len(tokens))
	listed := map[string]*Order{}
	for _, t := range tokens {
		var claims struct {
			jwt.RegisteredClaims
			Order *Order `json:"order"`
		}
		if _, _, err := jwt.NewParser().ParseUnverified(t, &claims); err != nil || claims.Order == nil || claims.Order.ID == "" {
			return nil, fmt.Errorf("%w: no order in the token", ErrInvalidOrderToken)
		}
		o := listed[claims.Order.ID]
		if o == nil {
			// The listing is by creation day; a day either side covers a
			// clock skew between the token's claim and the upstream.
			day := claims.Order.Created
			if day.IsZero() {
				day = time.Now()
			}
			list, err := s.client.Orders.List(ctx, day.AddDate(0, 0, -1), day.AddDate(0, 0, 1))
			if err != nil {
				return nil, err
			}
			for i := range list {
				listed[list[i].ID] = &list[i]
			}
			if o = listed[claims.Order.ID]; o == nil {
				return nil, fmt.Errorf("%w: the upstream lists no such order", ErrInvalidOrderToken)
			}
		}
		out = append(out, SignedOrder{Token: t, Order: o})
	}
	return out, nil
}
