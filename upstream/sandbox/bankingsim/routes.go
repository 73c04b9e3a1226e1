package bankingsim

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// Supported API versions. v2 is the minimum; v3 only changes the two-factor
// response shape.
const (
	minVersion = 2
	maxVersion = 3
)

var versionRe = regexp.MustCompile(`^v(\d+)$`)

// Routes registers the banking routes; the caller mounts them at /banking.
// /v2 and /v3 serve the one table of routes (versions differ in response
// shape only); any other version is refused as the spec's Errors rule 4 says.
func (s *Sim) Routes(r chi.Router) {
	r.Route("/v2", s.version(2))
	r.Route("/v3", s.version(3))
	r.HandleFunc("/{version}", s.refuseVersion)
	r.HandleFunc("/{version}/*", s.refuseVersion)
	r.NotFound(routeNotFound)
	r.MethodNotAllowed(methodNotAllowed)
}

// version mounts the route table for one API version.
func (s *Sim) version(v int) func(chi.Router) {
	return func(r chi.Router) {
		r.Use(withVersion(v))
		r.NotFound(routeNotFound)
		r.MethodNotAllowed(methodNotAllowed)
		s.routes(r)
	}
}

// routes is the banking route table: every route of the emulator, one line
// each, so that a new route is one added line. public routes take no token;
// auth routes need x-access-token and answer with the refreshed one.
func (s *Sim) routes(r chi.Router) {
	public := r
	auth := r.With(s.authenticate)

	public.Post("/staff/signin", s.staffSignIn)
	public.Post("/person/signin", s.personSignIn)
	public.Post("/introducer/signin", s.introducerSignIn)
	public.Post("/api/signin", s.apiSignIn)
	public.Post("/person/forgot-password", s.forgotPassword)
	public.Post("/person/recover-password", s.recoverPassword)
	public.Post("/corporation/signup", s.corporationSignUp)
	public.Post("/feedback", s.postFeedback)
	public.Get("/reports/files/{file}", s.getReportFile)

	auth.Post("/persons", s.createPerson)
	auth.Get("/persons", s.listPersons)
	auth.Get("/persons/me", s.getMe)
	auth.Put("/persons/me", s.updateMe)
	auth.Get("/persons/{id}", s.getPerson)
	auth.Put("/persons/{id}", s.updatePerson)
	auth.Delete("/persons/{id}", s.blockPerson)
	auth.Put("/persons/{id}/restore", s.restorePerson)

	auth.Get("/corporations", s.listCorporations)
	auth.Get("/corporations/current", s.currentCorporation)
	auth.Get("/corporation", s.currentCorporation) // alias
	auth.Get("/corporations/{id}", s.getCorporation)
	auth.Get("/corporation/{id}", s.getCorporation)
	auth.Put("/corporation/{id}", s.updateCorporation)
	auth.Get("/corporations/{id}/settings", s.getSettings)
	auth.Put("/corporations/{id}/settings", s.putSettings)

	auth.Get("/corporations/{corporation_id}/api-keys", s.listAPIKeys)
	auth.Post("/corporations/{corporation_id}/api-keys", s.createAPIKey)
	auth.Delete("/corporations/{corporation_id}/api-keys/{id}", s.deleteAPIKey)

	auth.Get("/corporations/{id}/kyc-documents", s.listKYC)
	auth.Post("/corporations/{id}/kyc-documents", s.uploadKYC)
	auth.Put("/corporations/{id}/kyc-documents/{documentId}", s.updateKYC)
	auth.Delete("/corporations/{id}/kyc-documents/{documentId}", s.deleteKYC)
	auth.Get("/cards", s.listCards)
	auth.Get("/cards/{id}", s.getCard)
	auth.Get("/cards/{id}/credentials", s.getCardCredentials)
	auth.Get("/cards/{id}/transactions", s.listCardTransactions)
	auth.Post("/cards/issue", s.issueCard)
	auth.Post("/card/simulation", s.simulateCard)

	auth.Get("/corporations/{id}/wallets", s.listWallets)
	auth.Get("/corporations/{id}/wallets/{walletId}", s.getWallet)
	auth.Post("/corporations/{id}/wallets", s.createWallet)
	auth.Get("/corporations/{corporation_id}/wallet-requisites", s.listRequisites)
	auth.Post("/corporations/{corporation_id}/wallet-requisites", s.createRequisites)
	auth.Post("/corporations/{corporation_id}/wallet-requisites/attach", s.attachRequisites)
	auth.Delete("/corporations/{corporation_id}/wallet-requisites/{id}", s.deleteRequisites)
	auth.Get("/lookup/ibans/is-sepa-enabled", s.isSEPAEnabled)
	auth.Post("/transactions", s.createTransaction)
	auth.Get("/corporations/{id}/invoices", s.listInvoices)
	auth.Get("/corporations/{id}/limits", s.listLimits)
	auth.Get("/corporations/{id}/limits/{limitId}", s.getLimit)
	auth.Put("/corporations/{id}/limits/{limitId}", s.putLimit)
	auth.Delete("/corporations/{id}/limits/{limitId}", s.deleteLimit)
	auth.Get("/reports/statement/pdf", s.statementPDF)
	auth.Get("/reports/statement/csv", s.statementCSV)
	auth.Get("/reports/introducers-corporates-fee", s.introducerFeeReport)
}

// Control registers the banking part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {
	r.Get("/sms", s.getSMS)
	r.Get("/email", s.getEmail)
	r.Get("/feedback", s.getFeedback)
	r.Get("/kyc-documents", s.getKYCStore)
	r.Post("/cards/{id}/status", s.controlCardStatus)
	r.Post("/cards/{id}/limit", s.controlCardLimit)
	r.Post("/banking/transactions/{id}/settle", s.controlSettle)
	r.Post("/banking/wallets/{id}/credit", s.controlCredit)
}

func (s *Sim) refuseVersion(w http.ResponseWriter, r *http.Request) {
	v := chi.URLParam(r, "version")
	if m := versionRe.FindStringSubmatch(v); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n < minVersion {
			writeErrors(w, http.StatusBadRequest, fieldErr("", "this API version is no longer supported", CodeVersionGone))
			return
		}
	}
	writeErrors(w, http.StatusBadRequest, fieldErr("", "this API version is not supported", CodeVersionUnsupported))
}

func routeNotFound(w http.ResponseWriter, _ *http.Request) {
	writeErrors(w, http.StatusNotFound, fieldErr("", "not found", 0))
}

func methodNotAllowed(w http.ResponseWriter, _ *http.Request) {
	writeErrors(w, http.StatusMethodNotAllowed, fieldErr("", "method not allowed", 0))
}
