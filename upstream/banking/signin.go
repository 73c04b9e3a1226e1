package banking

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"time"
)

// AuthService signs staff members, persons, introducers and API clients in,
// and recovers forgotten passwords. Biometric sign-in is marked not
// implemented by the spec and is not offered.
type AuthService service

// SignInRequest carries a principal's credentials and, on the repeat, the
// two-factor answer.
type SignInRequest struct {
	Email    string
	Password string
	// Fingerprint is the unique device id a person signs in with
	// (fp_client_data.identifiers.id_fingerprint); only the person route
	// sends it.
	Fingerprint int64
	// TwoFactorCode is the SMS code, set when repeating the request after a
	// TwoFactor step.
	TwoFactorCode string
	// ChallengeID is the TwoFactor step's ChallengeID (version 3 shape).
	ChallengeID string
}

// SignInResult is either final (Token set) or a two-factor step (TwoFactor
// set): the caller repeats the same request with TwoFactorCode (and
// ChallengeID) filled in.
type SignInResult struct {
	// Token is the access token of a completed sign-in.
	Token Secret
	// TwoFactor describes the pending SMS challenge.
	TwoFactor *TwoFactor
}

// TwoFactor is a pending SMS challenge, in either of the spec's shapes: v2
// gives only the masked phone; v3 adds an id, the issue time and the code's
// lifetime. The code itself is never exposed, even if the upstream echoes it:
// handing it to a frontend would defeat the second factor.
type TwoFactor struct {
	// TruncatedPhone is the masked phone number the code was sent to.
	TruncatedPhone string
	// ChallengeID identifies a v3 challenge; empty for the v2 shape.
	ChallengeID string
	// IssuedAt is when the code was issued (v3); zero when unknown.
	IssuedAt time.Time
	// ExpiresIn is the code's lifetime from IssuedAt (v3); zero when unknown.
	ExpiresIn time.Duration
}

// ExpiresAt is when the code stops being accepted, or the zero time when the
// upstream did not say.
func (t *TwoFactor) ExpiresAt() time.Time {
	if t.IssuedAt.IsZero() || t.ExpiresIn == 0 {
		return time.Time{}
	}
	return t.IssuedAt.Add(t.ExpiresIn)
}

type fpClientData struct {
	Identifiers struct {
		IDFingerprint int64 `json:"id_fingerprint"`
	} `json:"identifiers"`
}

// challengeAnswer is the version 3 repeat: challenge.two_fa.{challenge_id,two_fa_code}.
type challengeAnswer struct {
	TwoFA struct {
		ChallengeID string `json:"challenge_id"`
		TwoFACode   string `json:"two_fa_code"`
	} `json:"two_fa"`
}

type signInBody struct {
	Email        string           `json:"email"`
	Password     string           `json:"password"`
	FPClientData *fpClientData    `json:"fp_client_data,omitempty"`
	TwoFACode    string           `json:"two_fa_code,omitempty"`
	Challenge    *challengeAnswer `json:"challenge,omitempty"`
}

// twoFactorAnswer fills the two-factor part of a repeated request in the
// shape the upstream expects: v3 (configured, or the upstream sent a
// challenge id) nests it under challenge.two_fa, v2 sends two_fa_code.
func (s *service) twoFactorAnswer(code, challengeID string) (string, *challengeAnswer) {
	if code == "" {
		return "", nil
	}
	if s.client.versionNumber() >= 3 || challengeID != "" {
		ca := &challengeAnswer{}
		ca.TwoFA.ChallengeID = challengeID
		ca.TwoFA.TwoFACode = code
		return "", ca
	}
	return code, nil
}

// twoFactorProbe recognises both two-factor response shapes.
type twoFactorProbe struct {
	Token                string          `json:"token"`
	TruncatedPhoneNumber string          `json:"truncated_phone_number"`
	TwoFACode            json.RawMessage `json:"two_fa_code"` // read only to recognise v2; never kept
	Challenge            *struct {
		TwoFA *struct {
			ChallengeID          string   `json:"challenge_id"`
			CodeIssuedTimestamp  *float64 `json:"code_issued_timestamp"`
			CodeExpirationSec    *float64 `json:"code_expiration_sec"`
			TruncatedPhoneNumber string   `json:"truncated_phone_number"`
		} `json:"two_fa"`
	} `json:"challenge"`
}

// twoFactor returns the challenge the probe carries, or nil.
func (p *twoFactorProbe) twoFactor() *TwoFactor {
	if p.Challenge != nil && p.Challenge.TwoFA != nil {
		c := p.Challenge.TwoFA
		tf := &TwoFactor{TruncatedPhone: c.TruncatedPhoneNumber, ChallengeID: c.ChallengeID}
		if c.CodeIssuedTimestamp != nil {
			sec, frac := math.Modf(*c.CodeIssuedTimestamp)
			tf.IssuedAt = time.Unix(int64(sec), int64(frac*1e9)).UTC()
		}
		if c.CodeExpirationSec != nil {
			tf.ExpiresIn = time.Duration(*c.CodeExpirationSec * float64(time.Second))
		}
		return tf
	}
	if p.TruncatedPhoneNumber != "" || len(p.TwoFACode) > 0 {
		return &TwoFactor{TruncatedPhone: p.TruncatedPhoneNumber}
	}
	return nil
}

// errNoSignInOutcome means a 2xx sign-in answer carried neither a token nor
// a challenge: the upstream broke its contract.
var errNoSignInOutcome = errors.New("banking: sign-in response carries neither a token nor a two-factor challenge")

// SignInStaff signs a staff member in (POST /staff/signin). Two-factor is on
// by default for staff, so the first call normally returns a TwoFactor step.
func (s *AuthService) SignInStaff(ctx context.Context, in SignInRequest) (*SignInResult, error) {
	return s.signIn(ctx, "staff/signin", in, false)
}

// SignInPerson signs a person in (POST /person/signin) with the device
// fingerprint; two-factor applies when the person enabled it.
func (s *AuthService) SignInPerson(ctx context.Context, in SignInRequest) (*SignInResult, error) {
	return s.signIn(ctx, "person/signin", in, true)
}

// SignInIntroducer signs an introducer in (POST /introducer/signin).
func (s *AuthService) SignInIntroducer(ctx context.Context, in SignInRequest) (*SignInResult, error) {
	return s.signIn(ctx, "introducer/signin", in, false)
}

func (s *AuthService) signIn(ctx context.Context, path string, in SignInRequest, person bool) (*SignInResult, error) {
	body := signInBody{Email: in.Email, Password: in.Password}
	if person {
		body.FPClientData = &fpClientData{}
		body.FPClientData.Identifiers.IDFingerprint = in.Fingerprint
	}
	body.TwoFACode, body.Challenge = (*service)(s).twoFactorAnswer(in.TwoFactorCode, in.ChallengeID)
	return s.post(ctx, path, body)
}

// SignInAPIKey signs an API client in with its corporation private key
// (POST /api/signin); there is no second factor.
func (s *AuthService) SignInAPIKey(ctx context.Context, apiKey Secret) (*SignInResult, error) {
	return s.post(ctx, "api/signin", struct {
		APIKey string `json:"apiKey"`
	}{apiKey.Reveal()})
}

// post sends a sign-in and reads its outcome: the final token, which it
// writes back to the context's TokenSource, or a two-factor step.
func (s *AuthService) post(ctx context.Context, path string, body any) (*SignInResult, error) {
	p, err := callPublic[twoFactorProbe](ctx, s.client, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	if p.Token != "" {
		if ts := TokenSourceFrom(ctx); ts != nil {
			if err := ts.SetToken(ctx, p.Token); err != nil {
				return nil, &tokenSourceError{err: err}
			}
		}
		return &SignInResult{Token: Secret(p.Token)}, nil
	}
	if tf := p.twoFactor(); tf != nil {
		return &SignInResult{TwoFactor: tf}, nil
	}
	return nil, errNoSignInOutcome
}

// ForgotPassword asks the upstream to e-mail a recovery link to a person
// (POST /person/forgot-password).
func (s *AuthService) ForgotPassword(ctx context.Context, email string) error {
	_, err := callPublic[json.RawMessage](ctx, s.client, http.MethodPost, "person/forgot-password", struct {
		Email string `json:"email"`
	}{email})
	return err
}

// RecoverPassword sets a new password with the token from the recovery link
// (POST /person/recover-password).
func (s *AuthService) RecoverPassword(ctx context.Context, token Secret, password string) error {
	_, err := callPublic[json.RawMessage](ctx, s.client, http.MethodPost, "person/recover-password", struct {
		Password string `json:"password"`
		Token    string `json:"token"`
	}{password, token.Reveal()})
	return err
}
