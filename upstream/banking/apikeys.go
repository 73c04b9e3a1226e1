package banking

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// List reads a corporation's API keys (GET /corporations/:id/api-keys); the
// upstream returns id and name only.
func (s *APIKeysService) List(ctx context.Context, corporationID string) ([]*APIKey, *Response, error) {
	req, err := s.client.NewRequest(ctx, http.MethodGet, apiKeysPath(corporationID), nil)
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		APIKeys []*APIKey `json:"api_keys"`
	}
	resp, err := s.client.Do(req, &out)
	if err != nil {
		return nil, resp, err
	}
	return out.APIKeys, resp, nil
}

// Create creates an API key named name (POST /corporations/:id/api-keys).
func (s *APIKeysService) Create(ctx context.Context, corporationID, name string) (*APIKey, *Response, error) {
	req, err := s.client.NewRequest(ctx, http.MethodPost, apiKeysPath(corporationID), struct {
		Name string `json:"name"`
	}{name})
	if err != nil {
		return nil, nil, err
	}
	out := new(APIKey)
	resp, err := s.client.Do(req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Delete removes an API key (DELETE /corporations/:id/api-keys/:keyID) and
// reports the upstream's "removed" flag. The spec says "removed (boolean
// true)", so both a bare true and {"removed": true} are understood.
func (s *APIKeysService) Delete(ctx context.Context, corporationID, keyID string) (bool, *Response, error) {
	req, err := s.client.NewRequest(ctx, http.MethodDelete, apiKeysPath(corporationID)+"/"+pathEscape(keyID), nil)
	if err != nil {
		return false, nil, err
	}
	var raw json.RawMessage
	resp, err := s.client.Do(req, &raw)
	if err != nil {
		return false, resp, err
	}
	raw = bytes.TrimSpace(raw)
	var removed bool
	if json.Unmarshal(raw, &removed) == nil {
		return removed, resp, nil
	}
	var obj struct {
		Removed *bool `json:"removed"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Removed != nil {
		return *obj.Removed, resp, nil
	}
	return false, resp, fmt.Errorf("banking: DELETE api key: unexpected response shape")
}
