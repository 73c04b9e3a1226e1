package resolvers

import (
	"context"
	"time"

	"github.com/fingraph/fingraph/upstream/banking"
	"github.com/fingraph/fingraph/upstream/payments"
)

// The interfaces below are what resolvers ask of the two upstreams, one per
// upstream sub-service and each holding exactly the methods resolvers call:
// the real clients' services fit them unchanged (app wires them in), and
// tests put small fakes in their place. Reads that go through the
// operation's read cache are loaders' own interfaces, not these.

// Payments is the payments upstream as resolvers use it.
type Payments struct {
	// PaymentsFeatures says which additions to the spec the upstream
	// serves.
	PaymentsFeatures
	Customers      PaymentsCustomers
	Orders         PaymentsOrders
	OrderTokens    PaymentsOrderTokens
	Webhooks       PaymentsWebhooks
	Events         PaymentsEvents
	Individuals    PaymentsIndividuals
	PendingActions PaymentsPendingActions
}

// PaymentsFeatures answers whether the payments upstream serves an
// addition to its spec (the payments client's Offers).
type PaymentsFeatures interface {
	Offers(payments.Feature) bool
}

// PaymentsCustomers creates, reads and changes customers and their payment
// methods.
type PaymentsCustomers interface {
	Get(ctx context.Context, id string) (*payments.Customer, error)
	Create(ctx context.Context, c payments.CustomerCreatable) (*payments.Customer, error)
	UpdateContact(ctx context.Context, id string, c payments.Contact) (*payments.Contact, error)
	AddMethod(ctx context.Context, customerID string, m payments.PaymentMethodCreatable) (*payments.PaymentMethod, error)
	AddMethodWithOrder(ctx context.Context, customerID string, m payments.MethodWithOrder) (*payments.MethodWithOrderResult, error)
	SetMethods(ctx context.Context, id string, methods []payments.PaymentMethod) (*payments.Customer, error)
}

// PaymentsOrders creates, lists and changes orders.
type PaymentsOrders interface {
	Create(ctx context.Context, o payments.OrderCreatable) (*payments.Order, error)
	Apply(ctx context.Context, changes []payments.OrderChange) ([]payments.OrderChange, error)
	List(ctx context.Context, start, end time.Time) ([]payments.Order, error)
}

// PaymentsOrderTokens turns the signed order tokens the upstream answers
// with into orders: VerifyAll by their signature, ConfirmAll against the
// order listing where the upstream publishes no signing key.
type PaymentsOrderTokens interface {
	VerifyAll(ctx context.Context, tokens []string) ([]payments.SignedOrder, error)
	ConfirmAll(ctx context.Context, tokens []string) ([]payments.SignedOrder, error)
}

// PaymentsWebhooks manages the company's webhook.
type PaymentsWebhooks interface {
	Create(ctx context.Context, u string) (*payments.Webhook, error)
	List(ctx context.Context) ([]payments.Webhook, error)
	Delete(ctx context.Context, id string) error
}

// PaymentsEvents reads upstream events by id.
type PaymentsEvents interface {
	Get(ctx context.Context, id string) (*payments.Event, error)
}

// PaymentsIndividuals onboards and lists individuals.
type PaymentsIndividuals interface {
	Onboard(ctx context.Context, id string) (*payments.Individual, error)
	List(ctx context.Context, status string) ([]payments.Individual, error)
}

// PaymentsPendingActions reads an individual's pending actions.
type PaymentsPendingActions interface {
	ByIndividual(ctx context.Context, individualID string) ([]payments.PendingAction, error)
}

// Banking is the banking upstream as resolvers use it. Calls authenticate
// with the request's session (session.Middleware puts its token source in
// the context).
type Banking struct {
	// BankingFeatures says which additions to the spec the upstream
	// serves.
	BankingFeatures
	Auth         BankingAuth
	Persons      BankingPersons
	Corporations BankingCorporations
	APIKeys      BankingAPIKeys
	Cards        BankingCards
	KYC          BankingKYC
	Feedback     BankingFeedback
	Lookup       BankingLookup
	Wallets      BankingWallets
	Requisites   BankingRequisites
	Transactions BankingTransactions
	Limits       BankingLimits
	Reports      BankingReports
}

// BankingFeatures answers whether the banking upstream serves an addition
// to its spec (the banking client's Offers).
type BankingFeatures interface {
	Offers(banking.Feature) bool
}

// BankingAuth signs principals in and recovers passwords.
type BankingAuth interface {
	SignInStaff(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error)
	SignInPerson(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error)
	SignInIntroducer(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error)
	SignInAPIKey(ctx context.Context, apiKey banking.Secret) (*banking.SignInResult, error)
	ForgotPassword(ctx context.Context, email string) error
	RecoverPassword(ctx context.Context, token banking.Secret, password string) error
}

// BankingPersons reads and manages persons and the signed-in person.
type BankingPersons interface {
	Get(ctx context.Context, id string) (*banking.Person, error)
	List(ctx context.Context, opts *banking.ListOptions) (*banking.PersonList, error)
	Me(ctx context.Context) (*banking.Person, error)
	Create(ctx context.Context, in *banking.PersonCreateRequest) (*banking.Person, error)
	Update(ctx context.Context, id string, in *banking.PersonUpdateRequest) (*banking.Person, error)
	UpdateMe(ctx context.Context, in *banking.MeUpdateRequest) (*banking.Person, error)
	Block(ctx context.Context, id string) (string, error)
	Restore(ctx context.Context, id string) (string, error)
	ChangeMyPhone(ctx context.Context, in banking.PhoneChange) (*banking.PhoneChangeResult, error)
}

// BankingCorporations reads and manages corporations and their settings.
type BankingCorporations interface {
	Current(ctx context.Context) (*banking.Corporation, error)
	List(ctx context.Context, opts *banking.ListOptions) (*banking.CorporationList, error)
	Settings(ctx context.Context, id string) (*banking.CorporationSettings, error)
	SignUp(ctx context.Context, in *banking.CorporationSignUpRequest) (string, error)
	Update(ctx context.Context, id string, in *banking.CorporationUpdateRequest) (*banking.Corporation, error)
	UpdateSettings(ctx context.Context, id string, in *banking.CorporationSettingsUpdate) (*banking.CorporationSettings, error)
}

// BankingAPIKeys creates and deletes a corporation's API keys.
type BankingAPIKeys interface {
	Create(ctx context.Context, corporationID, name string) (*banking.APIKey, error)
	Delete(ctx context.Context, corporationID, keyID string) (bool, error)
}

// BankingCards reads, issues and simulates on cards.
type BankingCards interface {
	Get(ctx context.Context, id string) (*banking.Card, error)
	Credentials(ctx context.Context, id string) (*banking.CardCredentials, error)
	Issue(ctx context.Context, in *banking.IssueCardRequest) (string, error)
	Simulate(ctx context.Context, in *banking.SimulateCardRequest) (*banking.Authorisation, error)
}

// BankingKYC manages a corporation's KYC documents.
type BankingKYC interface {
	Upload(ctx context.Context, corporationID string, in *banking.KYCUpload) (*banking.KYCDocument, error)
	Update(ctx context.Context, corporationID, documentID string, in *banking.KYCUpdateRequest) (*banking.KYCDocument, error)
	Delete(ctx context.Context, corporationID, documentID string) (string, error)
}

// BankingFeedback sends user feedback.
type BankingFeedback interface {
	Send(ctx context.Context, in *banking.FeedbackRequest) error
}

// BankingLookup answers reference questions.
type BankingLookup interface {
	IsSEPAEnabled(ctx context.Context, sourceID, iban string) (bool, error)
}

// BankingWallets creates wallets.
type BankingWallets interface {
	Create(ctx context.Context, corporationID string, in *banking.WalletCreateRequest) ([]*banking.Wallet, error)
}

// BankingRequisites manages wallet requisites.
type BankingRequisites interface {
	Create(ctx context.Context, corporationID string, in *banking.RequisitesCreateRequest) ([]*banking.Requisites, error)
	Attach(ctx context.Context, corporationID string, in *banking.RequisitesCreateRequest) ([]*banking.Requisites, error)
	Delete(ctx context.Context, corporationID, id string) (string, error)
}

// BankingTransactions makes conversions and lists a wallet's transactions.
type BankingTransactions interface {
	CreateConversion(ctx context.Context, in *banking.ConversionRequest) (*banking.Transaction, error)
	ListByWallet(ctx context.Context, corporationID, walletID string, opts *banking.ListOptions) (*banking.TransactionList, error)
}

// BankingLimits changes a corporation's limits.
type BankingLimits interface {
	Update(ctx context.Context, corporationID, limitID string, in *banking.LimitUpdate) (*banking.Limit, error)
	Delete(ctx context.Context, corporationID, limitID string) (*banking.Limit, error)
}

// BankingReports requests statements and fee reports.
type BankingReports interface {
	StatementPDF(ctx context.Context, walletID string, opts *banking.StatementOptions) (string, error)
	StatementCSV(ctx context.Context, walletIDs []string, opts *banking.StatementOptions) (string, error)
	IntroducerFee(ctx context.Context, introducerID string, from, to time.Time, corporationIDs []string) (string, error)
}
