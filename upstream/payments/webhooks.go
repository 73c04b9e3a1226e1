package payments

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// WebhooksService handles the webhook routes (access token).
type WebhooksService service

// Webhook is the company's registered webhook address.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
}

// Create registers url; the upstream allows one per company, HTTPS only.
func (s *WebhooksService) Create(ctx context.Context, u string) (*Webhook, error) {
	return call[Webhook](ctx, s.client, KeyAccessToken, http.MethodPost, "v1/webhooks", map[string]string{"url": u})
}

// List lists the registered webhooks.
func (s *WebhooksService) List(ctx context.Context) ([]Webhook, error) {
	return callList[Webhook](ctx, s.client, KeyAccessToken, http.MethodGet, "v1/webhooks", nil)
}

// Delete removes a webhook by id.
func (s *WebhooksService) Delete(ctx context.Context, id string) error {
	_, err := call[json.RawMessage](ctx, s.client, KeyAccessToken, http.MethodDelete, "v1/webhooks/"+url.PathEscape(id), nil)
	return err
}
