package banking

import (
	"context"
	"errors"
	"net/http"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// APIKeysService manages a corporation's API keys. Only staff may call it.
type APIKeysService service

// APIKey is a corporation API key. PrivateKey is present only in the
// creation response; it is the value API clients sign in with.
type APIKey struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	PrivateKey Secret `json:"private_key,omitempty"`
	IsActive   *bool  `json:"is_active,omitempty"`
}

func apiKeysPath(corporationID string) string {
	return "corporations/" + pathEscape(corporationID) + "/api-keys"
}

// apiKeyList is the answer of GET /corporations/:id/api-keys.
type apiKeyList struct {
	APIKeys []*APIKey `json:"api_keys"`
}

// List reads a corporation's API keys (GET /corporations/:id/api-keys); the
// upstream returns id and name only.
func (s *APIKeysService) List(ctx context.Context, corporationID string) ([]*APIKey, error) {
	out, err := call[apiKeyList](ctx, s.client, http.MethodGet, apiKeysPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	return out.APIKeys, nil
}

// Create creates an API key named name (POST /corporations/:id/api-keys).
func (s *APIKeysService) Create(ctx context.Context, corporationID, name string) (*APIKey, error) {
	return call[APIKey](ctx, s.client, http.MethodPost, apiKeysPath(corporationID), struct {
		Name string `json:"name"`
	}{name})
}

// Delete removes an API key (DELETE /corporations/:id/api-keys/:keyID) and
// reports the upstream's "removed" flag.
func (s *APIKeysService) Delete(ctx context.Context, corporationID, keyID string) (bool, error) {
	out, err := call[removedFlag](ctx, s.client, http.MethodDelete, apiKeysPath(corporationID)+"/"+pathEscape(keyID), nil)
	if err != nil {
		return false, err
	}
	return bool(*out), nil
}

// removedFlag is the answer of a deletion. The spec says "removed (boolean
// true)", so both a bare true and {"removed": true} are understood.
type removedFlag bool

// UnmarshalJSON accepts a boolean or an object with a boolean "removed".
func (f *removedFlag) UnmarshalJSON(b []byte) error {
	var removed bool
	if roundtrip.Unmarshal(b, &removed) == nil {
		*f = removedFlag(removed)
		return nil
	}
	var obj struct {
		Removed *bool `json:"removed"`
	}
	if roundtrip.Unmarshal(b, &obj) != nil || obj.Removed == nil {
		return errors.New("banking: deletion answer is neither a boolean nor {\"removed\": boolean}")
	}
	*f = removedFlag(*obj.Removed)
	return nil
}
