package gqlhttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/redact"
	"github.com/fingraph/fingraph/upstream/roundtrip"
)

// ErrorPresenter turns every error into one with an extensions.code from
// gqlerr's closed set. Upstream rejections keep their details under
// extensions.upstream; internal errors are logged and shown only as
// gqlerr.InternalMessage.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	present := func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		// Errors about the request itself: parse, validation, limits.
		if c, ok := gqlErr.Extensions["code"].(string); ok {
			switch c {
			case errcode.ValidationFailed, errcode.ParseFailed, complexityExceeded:
				gqlErr.Extensions["code"] = string(gqlerr.BadUserInput)
				gqlErr.Extensions["reason"] = c
				return gqlErr
			case string(gqlerr.BadUserInput):
				return gqlErr
			case persistedQueryNotFound, persistedQueryNotSupported:
				// The automatic-persisted-query protocol: clients resend
				// the full query on exactly this message and code.
				return gqlErr
			}
		}
		presentCause(ctx, logger, gqlErr, err)
		return gqlErr
	}
	return func(ctx context.Context, err error) *gqlerror.Error {
		// Whatever an upstream or a validator put into a message (an
		// argument's value, an echoed field), no secret reaches the client.
		gqlErr := present(ctx, err)
		gqlErr.Message = redact.String(gqlErr.Message)
		return gqlErr
	}
}

// Codes gqlgen's extensions set: its complexity limit, and the automatic
// persisted query protocol, whose codes clients act on and so pass through.
const (
	complexityExceeded         = "COMPLEXITY_LIMIT_EXCEEDED"
	persistedQueryNotFound     = "PERSISTED_QUERY_NOT_FOUND"
	persistedQueryNotSupported = "PERSISTED_QUERY_NOT_SUPPORTED"
)

func presentCause(ctx context.Context, logger *slog.Logger, gqlErr *gqlerror.Error, err error) {
	ext := map[string]any{}
	for k, v := range gqlErr.Extensions {
		ext[k] = v
	}
	gqlErr.Extensions = ext

	if e, ok := gqlerr.As(err); ok {
		gqlErr.Message = e.Message
		ext["code"] = string(e.Code)
		if e.Field != "" {
			ext["field"] = e.Field
		}
		if e.RetryAfter > 0 {
			ext["retryAfter"] = e.RetryAfter
		}
		for k, v := range e.Extensions {
			if _, taken := ext[k]; !taken {
				ext[k] = v
			}
		}
		if e.Code == gqlerr.Internal {
			// The cause is what is worth logging; the *Error's own text is
			// only the code and the message shown.
			cause := err
			if e.Cause != nil {
				cause = e.Cause
			}
			logger.ErrorContext(ctx, gqlerr.InternalMessage, "path", gqlErr.Path.String(), "err", cause)
			gqlErr.Message = gqlerr.InternalMessage
		}
		return
	}
	if rj, ok := roundtrip.AsRejection(err); ok {
		presentRejection(ctx, logger, gqlErr, rj)
		return
	}
	if errors.Is(err, roundtrip.ErrInvalidID) {
		ext["code"] = string(gqlerr.NotFound)
		gqlErr.Message = "not found"
		return
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer, and it says
		// nothing about the upstream.
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the request was cancelled"
		return
	}
	var ue *roundtrip.UnavailableError
	if errors.As(err, &ue) {
		logger.WarnContext(ctx, "upstream unavailable", "path", gqlErr.Path.String(), "err", err)
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the " + ue.Service + " service is unavailable; try again shortly"
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the request timed out"
		return
	}
	logger.ErrorContext(ctx, gqlerr.InternalMessage, "path", gqlErr.Path.String(), "err", err)
	ext["code"] = string(gqlerr.Internal)
	gqlErr.Message = gqlerr.InternalMessage
}

// presentRejection maps an upstream's refusal, whichever upstream sent it:
// 404, 403 and 401 keep their meaning, 429 is RATE_LIMITED, other 4xx are
// UPSTREAM_REJECTED with extensions.upstream, 5xx and anything below 400
// (a redirect) UPSTREAM_UNAVAILABLE. A refusal of the gateway's own
// configuration is INTERNAL and logged. A refused session credential has
// already ended the session where the client saw it (the session's token
// source or key owner); here it is only said.
// Messages are the upstream's, already scrubbed of the request's secrets.
func presentRejection(ctx context.Context, logger *slog.Logger, gqlErr *gqlerror.Error, rj roundtrip.Rejection) {
	ext := gqlErr.Extensions
	switch {
	case rj.Misconfigured != "":
		logger.ErrorContext(ctx, rj.Misconfigured, "status", rj.Status, "code", rj.Code)
		ext["code"] = string(gqlerr.Internal)
		gqlErr.Message = gqlerr.InternalMessage
		return
	case rj.Status >= 500, rj.Status < 400:
		// Below 400: a redirect (never followed: roundtrip.WithTransport)
		// or another answer outside the specs, the upstream's fault too.
		if rj.Status >= 500 {
			logger.WarnContext(ctx, rj.Service+" server error", "status", rj.Status, "code", rj.Code)
		} else {
			logger.WarnContext(ctx, rj.Service+" answered with neither success nor refusal", "status", rj.Status)
		}
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the " + rj.Service + " service is unavailable; try again shortly"
		return
	}
	gqlErr.Message = rj.Message
	if gqlErr.Message == "" {
		gqlErr.Message = "the " + rj.Service + " service refused the request"
	}
	switch rj.Status {
	case http.StatusNotFound:
		ext["code"] = string(gqlerr.NotFound)
	case http.StatusForbidden:
		ext["code"] = string(gqlerr.Forbidden)
	case http.StatusUnauthorized:
		ext["code"] = string(gqlerr.Unauthenticated)
		if rj.CredentialRefused {
			gqlErr.Message = "the session has ended; sign in again"
		}
	case http.StatusTooManyRequests:
		ext["code"] = string(gqlerr.RateLimited)
	default:
		ext["code"] = string(gqlerr.UpstreamRejected)
	}
	upstream := map[string]any{"service": rj.Service, "status": rj.Status}
	if rj.Code != nil {
		upstream["code"] = rj.Code
	}
	if rj.Name != "" {
		upstream["name"] = rj.Name
	}
	if rj.Field != "" {
		upstream["field"] = rj.Field
	}
	ext["upstream"] = upstream
}
