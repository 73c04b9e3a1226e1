package banking

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// KYCService manages a corporation's KYC documents.
type KYCService service

// KYC document verifying statuses.
const (
	KYCNoMark      = "noMark"
	KYCVerified    = "verified"
	KYCNotVerified = "notVerified"
)

// KYCDocument is the spec's Corporation KYC document.
type KYCDocument struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// VerifyingStatus is noMark, verified or notVerified.
	VerifyingStatus string `json:"verifying_status"`
	// Type is "corporate".
	Type             string    `json:"type"`
	Path             string    `json:"path"`
	ExpirationAt     *string   `json:"expiration_at"`
	CreatedByLoginID string    `json:"created_by_login_id,omitempty"`
	UpdatedByLoginID string    `json:"updated_by_login_id,omitempty"`
	IdentityID       string    `json:"identity_id,omitempty"`
	CreatedAt        Timestamp `json:"created_at"`
	UpdatedAt        Timestamp `json:"updated_at"`
	CreatedBy        *Actor    `json:"created_by,omitempty"`
	UpdatedBy        *Actor    `json:"updated_by,omitempty"`
}

// KYCUpload is one file to upload. File is read once, as it is sent.
type KYCUpload struct {
	Filename string
	// ContentType is sent as the part's type; the upstream judges the
	// content, not this.
	ContentType string
	File        io.Reader
	// Type is the document type; "corporate" is the only one.
	Type string
}

// KYCUpdateRequest holds the fields of PUT .../kyc-documents/:id; nil fields
// are not sent.
type KYCUpdateRequest struct {
	Name            *string `json:"name,omitempty"`
	Type            *string `json:"type,omitempty"`
	ExpirationAt    *string `json:"expiration_at,omitempty"`
	VerifyingStatus *string `json:"verifying_status,omitempty"`
}

func kycPath(corporationID string) string {
	return "corporations/" + pathEscape(corporationID) + "/kyc-documents"
}

// List reads a corporation's KYC documents (GET /corporations/:id/kyc-documents).
func (s *KYCService) List(ctx context.Context, corporationID string) ([]*KYCDocument, error) {
	out, err := call[[]*KYCDocument](ctx, s.client, http.MethodGet, kycPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

// Update changes a KYC document (PUT /corporations/:id/kyc-documents/:documentId).
func (s *KYCService) Update(ctx context.Context, corporationID, documentID string, in *KYCUpdateRequest) (*KYCDocument, error) {
	return call[KYCDocument](ctx, s.client, http.MethodPut, kycPath(corporationID)+"/"+pathEscape(documentID), in)
}

// Delete removes a KYC document and returns its id.
func (s *KYCService) Delete(ctx context.Context, corporationID, documentID string) (string, error) {
	out, err := call[idResponse](ctx, s.client, http.MethodDelete, kycPath(corporationID)+"/"+pathEscape(documentID), nil)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}

// Upload sends a KYC file as multipart/form-data (POST
// /corporations/:id/kyc-documents). The body is streamed through a pipe as
// the file is read, never held whole in memory; so it is sent once, never
// retried.
func (s *KYCService) Upload(ctx context.Context, corporationID string, in *KYCUpload) (*KYCDocument, error) {
	if in == nil || in.File == nil {
		return nil, errors.New("banking: KYC upload needs a file")
	}
	req, err := s.client.NewRequest(ctx, http.MethodPost, kycPath(corporationID), nil)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	defer pr.Close() // ends the writer if the request never reads the body
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeKYCForm(mw, in))
	}()
	req.Body = pr
	req.Header.Set("Content-Type", mw.FormDataContentType())
	out := new(KYCDocument)
	if err := s.client.doStream(req, out); err != nil {
		return nil, err
	}
	return out, nil
}

func writeKYCForm(mw *multipart.Writer, in *KYCUpload) error {
	typ := in.Type
	if typ == "" {
		typ = "corporate"
	}
	if err := mw.WriteField("type", typ); err != nil {
		return err
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + quoteEscaper.Replace(in.Filename) + `"`}
	ct := in.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h["Content-Type"] = []string{ct}
	fw, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fw, in.File); err != nil {
		return err
	}
	return mw.Close()
}

// doStream is Do for a request whose body is a stream: one attempt through
// the shared send path's breaker, with the deadline, the token and its
// write-back, but no buffering of the body and so no retry.
func (c *Client) doStream(req *http.Request, v any) error {
	resp, err := c.send.Stream(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("banking: read %s %s response: %w", req.Method, req.URL.Path, err)
	}
	if err := roundtrip.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("banking: decode %s %s response: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")
