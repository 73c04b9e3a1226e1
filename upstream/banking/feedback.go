package banking

import (
	"context"
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
func (s *FeedbackService) Send(ctx context.Context, in *FeedbackRequest) (*Response, error) {
	req, err := s.client.newPublicRequest(ctx, http.MethodPost, "feedback", in)
	if err != nil {
		return nil, err
	}
	return s.client.Do(req, nil)
}
