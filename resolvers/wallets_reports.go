package resolvers

import (
	"context"
	"time"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/graph/model"
	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
)

// corporationCurrency is the currency a corporation's limits are in: its
// own, EUR (the only one the spec lets a corporation have) when unknown.
func corporationCurrency(c *model.Corporation) string {
	if c != nil && c.Currency != nil && *c.Currency != "" {
		return *c.Currency
	}
	return "EUR"
}

// corporationCurrencyOf reads the corporation (from the request's loader)
// for its currency; a failure falls back to EUR rather than failing a
// change the upstream has already made.
func (r *Resolver) corporationCurrencyOf(ctx context.Context, id string) string {
	c, err := loaders.For(ctx).Corporation.Get(ctx, id)
	if err != nil || c == nil {
		return "EUR"
	}
	return corporationCurrency(toCorporation(c))
}

// reportFile signs a download link for an upstream report file, for the
// session s only.
func (r *Resolver) reportFile(s *session.Session, reportURL, fileName string) (*model.ReportFile, error) {
	if r.Downloads == nil {
		return nil, gqlerr.InternalError(errNoDownloads)
	}
	path, exp, err := r.Downloads.Sign(reportURL, fileName, s.ID)
	if err != nil {
		return nil, gqlerr.InternalError(err)
	}
	return &model.ReportFile{URL: path, FileName: fileName, ExpiresAt: exp}, nil
}

type resolverError string

func (e resolverError) Error() string { return string(e) }

const errNoDownloads = resolverError("resolvers: no download signer configured")

func (r *Resolver) requestStatement(ctx context.Context, in model.RequestStatementInput) (*model.ReportFile, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	opts, err := statementOptions(in)
	if err != nil {
		return nil, err
	}
	// A person's corporationId was dropped by RequestStatement.
	if s.Kind != session.Person && opts.CorporationID == "" {
		return nil, gqlerr.BadInput("input.corporationId", "input.corporationId is required for staff, introducers and API clients")
	}
	span := "all-" + time.Now().UTC().Format(model.DateLayout)
	if opts.From != "" || opts.To != "" {
		span = opts.From + "_" + opts.To
	}
	var url, name string
	if in.Format == model.StatementFormatPDF {
		url, err = r.Banking.Reports.StatementPDF(ctx, in.WalletIds[0], opts)
		name = "statement-" + span + ".pdf"
	} else {
		url, err = r.Banking.Reports.StatementCSV(ctx, in.WalletIds, opts)
		name = "statement-" + span + ".csv"
	}
	if err != nil {
		return nil, err
	}
	return r.reportFile(s, url, name)
}

func (r *Resolver) requestIntroducerFeeReport(ctx context.Context, in model.RequestIntroducerFeeReportInput) (*model.ReportFile, error) {
	s, err := mustSession(ctx)
	if err != nil {
		return nil, err
	}
	var v validator
	introducer := deref(in.IntroducerID)
	if s.Kind != session.Staff && s.Kind != session.Introducer {
		return nil, gqlerr.Forbiddenf("the introducer fee report is for staff and introducers")
	}
	if introducer == "" && s.Kind == session.Introducer {
		// Known only when the sign-in told the gateway; the spec has no
		// route for an introducer to read its own id.
		introducer = s.PrincipalID
	}
	v.required("input.introducerId", introducer, 100)
	if in.From.After(in.To.Time) {
		v.fail("input.from", "input.from must not be after input.to")
	}
	for _, id := range in.CorporationIds {
		v.id("input.corporationIds", id)
	}
	if v.err != nil {
		return nil, v.err
	}
	url, err := r.Banking.Reports.IntroducerFee(ctx, introducer, in.From.Time, in.To.Time, in.CorporationIds)
	if err != nil {
		return nil, err
	}
	return r.reportFile(s, url, "introducer-fee-"+in.From.Format(model.DateLayout)+"_"+in.To.Format(model.DateLayout)+".csv")
}
