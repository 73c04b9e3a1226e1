package payments

import (
	"context"
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
	req, err := s.client.NewRequest(ctx, KeyAccessToken, http.MethodPost, "v1/webhooks", map[string]string{"url": u})
	if err != nil {
		return nil, err
	}
	out := new(Webhook)
	if _, err := s.client.Do(req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// List lists the registered webhooks.
func (s *WebhooksService) List(ctx context.Context) ([]Webhook, error) {
	req, err := s.client.NewRequest(ctx, KeyAccessToken, http.MethodGet, "v1/webhooks", nil)
	if err != nil {
		return nil, err
	}
	var out []Webhook
	if _, err := s.client.Do(req, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete removes a webhook by id.
func (s *WebhooksService) Delete(ctx context.Context, id string) error {
	req, err := s.client.NewRequest(ctx, KeyAccessToken, http.MethodDelete, "v1/webhooks/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	_, err = s.client.Do(req, nil)
	return err
}
