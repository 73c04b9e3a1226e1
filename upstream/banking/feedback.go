package banking

import (
	"context"
	"encoding/json"
	"net/http"
)

// FeedbackService sends user feedback, guarded by a captcha.
type FeedbackService service

// FeedbackRequest holds the fields of POST /feedback. The spec's sample also
// shows a password, which is not a field of feedback; it is never sent.
type FeedbackRequest struct {
	Name    string `json:"name"`
	Email   string `json:"email"`
	Subject string `json:"subject"`
	// Feedback is the message text.
	Feedback string `json:"feedback"`
	// Captcha is the captcha response token, sent as recaptcha.
	Captcha string `json:"recaptcha"`
}

// Send posts feedback (POST /feedback); it needs no access token.
func (s *FeedbackService) Send(ctx context.Context, in *FeedbackRequest) error {
	_, err := callPublic[json.RawMessage](ctx, s.client, http.MethodPost, "feedback", in)
	return err
}
