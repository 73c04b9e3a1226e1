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
	r.Get("/openapi.json", s.openAPI)
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

// route is one banking route. The chi routes and the OpenAPI document are
// both built from routeTable, so the document lists exactly what is served.
type route struct {
	method   string
	pattern  string
	public   bool // no x-access-token
	handler  http.HandlerFunc
	op       string // operationId, as a person would name the call
	summary  string
	query    []string // query parameter names, see queryParams
	request  string   // component schema of the body, "" for none
	resp     string   // component schema of the 200 body ("" for a file download)
	addition bool     // a sandbox addition: the spec does not show this route
}

// pageQuery is the spec's pagination query plus the sandbox's meta[offset].
var pageQuery = []string{"meta[sort_by]", "meta[sort_type]", "meta[limit]", "meta[offset]"}

// routeTable is the banking route table: every route of the emulator, one
// line each, so that a new route is one added line. public routes take no
// token; the others need x-access-token and answer with the refreshed one.
func (s *Sim) routeTable() []route {
	statement := []string{"from", "to", "timezone", "corporationId"}
	return []route{
		{"POST", "/staff/signin", true, s.staffSignIn, "signInStaff", "Sign a staff member in (two-factor on by default)", nil, "SignIn", "SignInResult", false},
		{"POST", "/person/signin", true, s.personSignIn, "signInPerson", "Sign a person in, with device fingerprint and optional two-factor", nil, "PersonSignIn", "SignInResult", false},
		{"POST", "/introducer/signin", true, s.introducerSignIn, "signInIntroducer", "Sign an introducer in", nil, "SignIn", "SignInResult", false},
		{"POST", "/api/signin", true, s.apiSignIn, "signInAPIKey", "Sign an API client in with a corporation private key", nil, "APISignIn", "Token", false},
		{"POST", "/person/forgot-password", true, s.forgotPassword, "forgotPassword", "Send a password recovery e-mail", nil, "ForgotPassword", "Empty", false},
		{"POST", "/person/recover-password", true, s.recoverPassword, "recoverPassword", "Set a new password with the recovery token", nil, "RecoverPassword", "Empty", false},
		{"POST", "/corporation/signup", true, s.corporationSignUp, "signUpCorporation", "Sign a corporation up (captcha)", nil, "CorporationSignUp", "IDObject", false},
		{"POST", "/feedback", true, s.postFeedback, "sendFeedback", "Send feedback (captcha)", nil, "Feedback", "Empty", false},
		{"GET", "/reports/files/{file}", true, s.getReportFile, "downloadReportFile", "Download a generated report: the file behind a report_path URL (the spec gives the URL, not its route); the path is the capability", []string{"name"}, "", "", false},

		{"POST", "/persons", false, s.createPerson, "createPerson", "Create a person of the corporation", nil, "PersonCreate", "Person", false},
		{"GET", "/persons", false, s.listPersons, "listPersons", "List persons (staff may filter by corporation_id)", append([]string{"corporation_id"}, pageQuery...), "", "PersonList", false},
		{"GET", "/persons/me", false, s.getMe, "getMe", "Read the signed-in person, with permissions", nil, "", "Person", false},
		{"PUT", "/persons/me", false, s.updateMe, "updateMe", "Update the signed-in person; a phone change is two steps", nil, "MeUpdate", "PersonOrTwoFactor", false},
		{"GET", "/persons/{id}", false, s.getPerson, "getPerson", "Read a person", nil, "", "Person", false},
		{"PUT", "/persons/{id}", false, s.updatePerson, "updatePerson", "Update a person; absent fields stay unchanged", nil, "PersonUpdate", "Person", false},
		{"DELETE", "/persons/{id}", false, s.blockPerson, "blockPerson", "Block a person", nil, "", "IDObject", false},
		{"PUT", "/persons/{id}/restore", false, s.restorePerson, "restorePerson", "Restore a blocked person", nil, "", "IDObject", false},

		{"GET", "/corporations", false, s.listCorporations, "listCorporations", "List corporations", pageQuery, "", "CorporationList", false},
		{"GET", "/corporations/current", false, s.currentCorporation, "getCurrentCorporation", "Read the caller's corporation", nil, "", "Corporation", false},
		{"GET", "/corporation", false, s.currentCorporation, "getCurrentCorporationAlias", "Alias of GET /corporations/current", nil, "", "Corporation", true},
		{"GET", "/corporations/{id}", false, s.getCorporation, "getCorporation", "Read a corporation", nil, "", "Corporation", true},
		{"GET", "/corporation/{id}", false, s.getCorporation, "getCorporationAlias", "Alias of GET /corporations/{id}", nil, "", "Corporation", true},
		{"PUT", "/corporation/{id}", false, s.updateCorporation, "updateCorporation", "Update a corporation (staff)", nil, "CorporationUpdate", "Corporation", false},
		{"GET", "/corporations/{id}/settings", false, s.getSettings, "getCorporationSettings", "Read corporation settings", nil, "", "Settings", false},
		{"PUT", "/corporations/{id}/settings", false, s.putSettings, "updateCorporationSettings", "Update corporation settings", nil, "SettingsUpdate", "Settings", false},

		{"GET", "/corporations/{corporation_id}/api-keys", false, s.listAPIKeys, "listAPIKeys", "List API keys (staff)", nil, "", "APIKeyList", false},
		{"POST", "/corporations/{corporation_id}/api-keys", false, s.createAPIKey, "createAPIKey", "Create an API key (staff)", nil, "APIKeyCreate", "APIKey", false},
		{"DELETE", "/corporations/{corporation_id}/api-keys/{id}", false, s.deleteAPIKey, "deleteAPIKey", "Delete an API key (staff)", nil, "", "Removed", false},

		{"GET", "/corporations/{id}/kyc-documents", false, s.listKYC, "listKYCDocuments", "List KYC documents", nil, "", "KYCDocumentList", false},
		{"POST", "/corporations/{id}/kyc-documents", false, s.uploadKYC, "uploadKYCDocument", "Upload a KYC document (multipart)", nil, "KYCUpload", "KYCDocument", false},
		{"PUT", "/corporations/{id}/kyc-documents/{documentId}", false, s.updateKYC, "updateKYCDocument", "Update a KYC document", nil, "KYCUpdate", "KYCDocument", false},
		{"DELETE", "/corporations/{id}/kyc-documents/{documentId}", false, s.deleteKYC, "deleteKYCDocument", "Delete a KYC document", nil, "", "IDObject", false},

		{"GET", "/cards", false, s.listCards, "listCards", "List cards", nil, "", "CardList", false},
		{"GET", "/cards/{id}", false, s.getCard, "getCard", "Read a card", nil, "", "Card", false},
		{"GET", "/cards/{id}/credentials", false, s.getCardCredentials, "getCardCredentials", "Read a card's full number and CVC2", nil, "", "CardCredentials", false},
		{"GET", "/cards/{id}/transactions", false, s.listCardTransactions, "listCardTransactions", "List a card's transactions", pageQuery, "", "TransactionList", false},
		{"POST", "/cards/issue", false, s.issueCard, "issueCard", "Issue a virtual card", nil, "CardIssue", "IDObject", false},
		{"POST", "/card/simulation", false, s.simulateCard, "simulateCardTransaction", "Simulate a card authorisation", nil, "CardSimulation", "CardSimulationResult", false},

		{"GET", "/corporations/{id}/wallets", false, s.listWallets, "listWallets", "List a corporation's wallets", nil, "", "WalletArray", false},
		{"GET", "/corporations/{id}/wallets/{walletId}", false, s.getWallet, "getWallet", "Read a wallet", nil, "", "Wallet", false},
		{"POST", "/corporations/{id}/wallets", false, s.createWallet, "createWallet", "Create a wallet (staff)", nil, "WalletCreate", "WalletCreated", false},
		{"GET", "/corporations/{corporation_id}/wallet-requisites", false, s.listRequisites, "listWalletRequisites", "List wallet requisites", nil, "", "RequisitesArray", false},
		{"POST", "/corporations/{corporation_id}/wallet-requisites", false, s.createRequisites, "createWalletRequisites", "Create wallet requisites", nil, "RequisitesCreate", "RequisitesArray", false},
		{"POST", "/corporations/{corporation_id}/wallet-requisites/attach", false, s.attachRequisites, "attachWalletRequisites", "Attach requisites to a wallet", nil, "RequisitesAttach", "RequisitesArray", false},
		{"DELETE", "/corporations/{corporation_id}/wallet-requisites/{id}", false, s.deleteRequisites, "deleteWalletRequisites", "Delete wallet requisites", nil, "", "IDObject", false},
		{"GET", "/lookup/ibans/is-sepa-enabled", false, s.isSEPAEnabled, "isSEPAEnabledIBAN", "Check that an IBAN can receive SEPA from a wallet", []string{"source_id", "iban"}, "", "SEPAEnabled", false},
		{"POST", "/transactions", false, s.createTransaction, "createConversion", "Create a currency conversion", nil, "ConversionCreate", "TransactionCreated", false},
		{"GET", "/corporations/{id}/wallets/{walletId}/transactions", false, s.listWalletTransactions, "listWalletTransactions", "List the transactions from or to a wallet, newest first (the spec does not show a listing)", pageQuery, "", "TransactionList", true},
		{"GET", "/corporations/{id}/invoices", false, s.listInvoices, "listInvoices", "List invoices", nil, "", "InvoiceArray", false},
		{"GET", "/corporations/{id}/limits", false, s.listLimits, "listLimits", "List corporation limits", nil, "", "LimitArray", false},
		{"GET", "/corporations/{id}/limits/{limitId}", false, s.getLimit, "getLimit", "Read a corporation limit", nil, "", "Limit", false},
		{"PUT", "/corporations/{id}/limits/{limitId}", false, s.putLimit, "updateLimit", "Update a corporation limit", nil, "LimitUpdate", "Limit", false},
		{"DELETE", "/corporations/{id}/limits/{limitId}", false, s.deleteLimit, "deleteLimit", "Remove a corporation limit", nil, "", "Limit", false},
		{"GET", "/reports/statement/pdf", false, s.statementPDF, "createStatementPDF", "Build a PDF statement of one wallet", append([]string{"walletId"}, statement...), "", "ReportPath", false},
		{"GET", "/reports/statement/csv", false, s.statementCSV, "createStatementCSV", "Build a CSV statement of wallets", append([]string{"wallets", "wallets[]"}, statement...), "", "ReportPath", false},
		{"GET", "/reports/introducers-corporates-fee", false, s.introducerFeeReport, "createIntroducerFeeReport", "Build the introducer fee report", []string{"introducerId", "from", "to", "corporationIds", "corporationIds[]"}, "", "ReportPath", false},
	}
}

// routes registers the route table on one version's router.
func (s *Sim) routes(r chi.Router) {
	auth := r.With(s.authenticate)
	for _, rt := range s.served() {
		if rt.public {
			r.Method(rt.method, rt.pattern, rt.handler)
			continue
		}
		auth.Method(rt.method, rt.pattern, rt.handler)
	}
}

// served is the route table less, in strict mode, the sandbox's additions.
func (s *Sim) served() []route {
	var out []route
	for _, rt := range s.routeTable() {
		if !s.opts.Strict || !rt.addition {
			out = append(out, rt)
		}
	}
	return out
}

// Control registers the banking part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {
	r.Get("/sms", s.getSMS)
	r.Get("/email", s.getEmail)
	r.Get("/feedback", s.getFeedback)
	r.Get("/kyc-documents", s.getKYCStore)
	r.Post("/cards/{id}/status", s.controlCardStatus)
	r.Post("/cards/{id}/limit", s.controlCardLimit)
	r.Post("/cards/{id}/transactions", s.controlCardTransaction)
	r.Post("/cards/{id}/transactions/{txId}/reverse", s.controlReverseCardTransaction)
	r.Post("/banking/transactions/{id}/settle", s.controlSettle)
	r.Post("/banking/wallets/{id}/credit", s.controlCredit)
	r.Post("/banking/bulk", s.controlBulk)
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
