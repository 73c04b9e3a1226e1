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
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// ErrorPresenter turns every error into one with an extensions.code from
// gqlerr's closed set. Upstream rejections keep their details under
// extensions.upstream; internal errors are logged and shown only as
// "internal error".
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
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
		if e.Code == gqlerr.Internal {
			logger.ErrorContext(ctx, "internal error", "path", gqlErr.Path.String(), "err", err)
			gqlErr.Message = "internal error"
		}
		return
	}
	if pe, ok := payments.AsError(err); ok {
		presentPayments(ctx, logger, gqlErr, pe)
		return
	}
	var be *banking.ErrorResponse
	if errors.As(err, &be) {
		presentBanking(ctx, logger, gqlErr, be)
		return
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer, and it says
		// nothing about the upstream.
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the request was cancelled"
		return
	}
	if banking.IsUnavailable(err) {
		logger.WarnContext(ctx, "upstream unavailable", "path", gqlErr.Path.String(), "err", err)
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the banking service is unavailable; try again shortly"
		return
	}
	var ue *payments.UnavailableError
	if errors.As(err, &ue) {
		logger.WarnContext(ctx, "upstream unavailable", "path", gqlErr.Path.String(), "err", err)
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the payments service is unavailable; try again shortly"
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the request timed out"
		return
	}
	logger.ErrorContext(ctx, "internal error", "path", gqlErr.Path.String(), "err", err)
	ext["code"] = string(gqlerr.Internal)
	gqlErr.Message = "internal error"
}

func presentPayments(ctx context.Context, logger *slog.Logger, gqlErr *gqlerror.Error, pe *payments.ErrorResponse) {
	ext := gqlErr.Extensions
	upstream := map[string]any{"service": "payments", "status": pe.StatusCode, "code": pe.Code}
	if pe.Field != "" {
		upstream["field"] = pe.Field
	}
	gqlErr.Message = pe.Message
	if gqlErr.Message == "" {
		gqlErr.Message = "the payments service refused the request"
	}
	switch {
	case pe.StatusCode == http.StatusNotFound:
		ext["code"] = string(gqlerr.NotFound)
	case pe.StatusCode == http.StatusForbidden && isCustomerSession(ctx):
		ext["code"] = string(gqlerr.Forbidden)
	case pe.StatusCode == http.StatusForbidden:
		// The merchant's own key was of the wrong kind for the route: the
		// gateway is misconfigured, which the client cannot fix.
		logger.ErrorContext(ctx, "payments refused the gateway's credentials: wrong key kind for the route", "status", pe.StatusCode, "code", pe.Code)
		ext["code"] = string(gqlerr.Internal)
		gqlErr.Message = "internal error"
		return
	case pe.StatusCode == http.StatusUnauthorized && isCustomerSession(ctx):
		// A customer session's key was refused: the session is over.
		session.Revoke(ctx)
		ext["code"] = string(gqlerr.Unauthenticated)
		gqlErr.Message = "the session has ended; sign in again"
	case pe.StatusCode == http.StatusUnauthorized:
		// The gateway's own merchant keys were refused: a configuration
		// problem the client cannot fix.
		logger.ErrorContext(ctx, "payments refused the gateway's credentials", "status", pe.StatusCode, "code", pe.Code)
		ext["code"] = string(gqlerr.Internal)
		gqlErr.Message = "internal error"
		return
	case pe.StatusCode == http.StatusTooManyRequests:
		ext["code"] = string(gqlerr.RateLimited)
	case pe.StatusCode >= 500:
		logger.WarnContext(ctx, "payments server error", "status", pe.StatusCode, "code", pe.Code)
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the payments service is unavailable; try again shortly"
		return
	default:
		ext["code"] = string(gqlerr.UpstreamRejected)
	}
	ext["upstream"] = upstream
}

// presentBanking maps a banking rejection: 404, 403 and 401 keep their
// meaning, other 4xx are UPSTREAM_REJECTED, 5xx UPSTREAM_UNAVAILABLE. A 401
// that names no field refused the session's token: the session cannot work
// any more, so it is ended. A 401 naming a field (password, apiKey) is a
// failed sign-in. Messages are the upstream's, already scrubbed of the
// request's secrets by the client.
func presentBanking(ctx context.Context, logger *slog.Logger, gqlErr *gqlerror.Error, be *banking.ErrorResponse) {
	ext := gqlErr.Extensions
	first := be.First()
	upstream := map[string]any{"service": "banking", "status": be.StatusCode}
	if first.Code != 0 {
		upstream["code"] = first.Code
		if name := banking.CodeName(first.Code); name != "" {
			upstream["name"] = name
		}
	}
	if first.Field != "" {
		upstream["field"] = first.Field
	}
	gqlErr.Message = first.Message
	if gqlErr.Message == "" {
		gqlErr.Message = "the banking service refused the request"
	}
	switch {
	case be.StatusCode == http.StatusNotFound:
		ext["code"] = string(gqlerr.NotFound)
	case be.StatusCode == http.StatusForbidden:
		ext["code"] = string(gqlerr.Forbidden)
	case be.StatusCode == http.StatusUnauthorized:
		ext["code"] = string(gqlerr.Unauthenticated)
		if first.Field == "" {
			if session.Revoke(ctx) {
				logger.InfoContext(ctx, "banking refused the session's token; session ended")
			}
			gqlErr.Message = "the session has ended; sign in again"
		}
	case be.StatusCode == http.StatusTooManyRequests:
		ext["code"] = string(gqlerr.RateLimited)
	case be.StatusCode >= 500:
		logger.WarnContext(ctx, "banking server error", "status", be.StatusCode, "code", first.Code)
		ext["code"] = string(gqlerr.UpstreamUnavailable)
		gqlErr.Message = "the banking service is unavailable; try again shortly"
		return
	case banking.IsVersionUnsupported(be):
		logger.ErrorContext(ctx, "banking refuses the configured API version", "status", be.StatusCode, "code", first.Code)
		ext["code"] = string(gqlerr.Internal)
		gqlErr.Message = "internal error"
		return
	default:
		ext["code"] = string(gqlerr.UpstreamRejected)
	}
	ext["upstream"] = upstream
}

func isCustomerSession(ctx context.Context) bool {
	s := session.From(ctx)
	return s != nil && s.Kind == session.Customer
}
