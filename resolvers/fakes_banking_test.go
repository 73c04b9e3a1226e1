package resolvers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/fingraph/fingraph/resolvers/loaders"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/banking"
)

// Records of the fake banking upstream.
type (
	bankingCorporation = banking.Corporation
	bankingPerson      = banking.Person
	bankingWallet      = banking.Wallet
	bankingAPIKey      = banking.APIKey
)

// fakeBanking is an in-memory banking upstream: one fake per service the
// resolvers and the read cache use. It knows its callers as the real one
// does, by the access token the session's token source gives a call.
type fakeBanking struct {
	// specOnly makes Offers answer false for every addition, and a
	// listing asking for an offset fail with banking.ErrOffsetNotShown,
	// as the strict sandbox's client does.
	specOnly bool

	mu sync.Mutex
	// callers maps an access token to who it signs in.
	callers map[string]principal
	// accounts maps a sign-in e-mail to its principal (password
	// demoPassword).
	accounts map[string]principal

	auth         *fakeAuth
	persons      *fakePersons
	corporations *fakeCorporations
	apiKeys      *fakeAPIKeys
	cards        *fakeCards
	kyc          *fakeKYC
	feedback     *fakeFeedback
	lookup       *fakeLookup
	wallets      *fakeWallets
	requisites   *fakeRequisites
	transactions *fakeTransactions
	invoices     *fakeCorpList[banking.Invoice]
	limits       *fakeLimits
	reports      *fakeReports
}

// demoPassword signs every fake account in.
const demoPassword = "demo-password"

func newFakeBanking() *fakeBanking {
	b := &fakeBanking{callers: map[string]principal{}, accounts: map[string]principal{}}
	b.auth = &fakeAuth{fakeService: newFakeService("banking.Auth"), b: b}
	b.persons = &fakePersons{fakeService: newFakeService("banking.Persons"), b: b}
	b.corporations = &fakeCorporations{fakeService: newFakeService("banking.Corporations"), b: b,
		settings: map[string]*banking.CorporationSettings{}}
	b.apiKeys = &fakeAPIKeys{fakeCorpList: newFakeCorpList[banking.APIKey]("banking.APIKeys")}
	b.cards = &fakeCards{fakeService: newFakeService("banking.Cards"), b: b, transactions: map[string][]*banking.CardTransaction{}}
	b.kyc = &fakeKYC{newFakeCorpList[banking.KYCDocument]("banking.KYC")}
	b.feedback = &fakeFeedback{fakeService: newFakeService("banking.Feedback")}
	b.lookup = &fakeLookup{fakeService: newFakeService("banking.Lookup"), sepa: map[string]bool{}}
	b.wallets = &fakeWallets{fakeCorpList: newFakeCorpList[banking.Wallet]("banking.Wallets")}
	b.requisites = &fakeRequisites{newFakeCorpList[banking.Requisites]("banking.Requisites")}
	b.transactions = &fakeTransactions{fakeService: newFakeService("banking.Transactions"), b: b, byWallet: map[string][]*banking.Transaction{}}
	b.invoices = newFakeCorpList[banking.Invoice]("banking.Invoices")
	b.limits = &fakeLimits{newFakeCorpList[banking.Limit]("banking.Limits")}
	b.reports = &fakeReports{fakeService: newFakeService("banking.Reports")}
	return b
}

// Offers is the client's capability: every addition unless specOnly.
func (b *fakeBanking) Offers(banking.Feature) bool { return !b.specOnly }

// resolvers is the fake as resolvers use it.
func (b *fakeBanking) resolvers() Banking {
	return Banking{BankingFeatures: b, Auth: b.auth, Persons: b.persons, Corporations: b.corporations, APIKeys: b.apiKeys,
		Cards: b.cards, KYC: b.kyc, Feedback: b.feedback, Lookup: b.lookup, Wallets: b.wallets, Requisites: b.requisites,
		Transactions: b.transactions, Limits: b.limits, Reports: b.reports}
}

// sources is the fake as the read cache reads it.
func (b *fakeBanking) sources() loaders.BankingSource {
	return loaders.BankingSource{Persons: b.persons, Corporations: b.corporations, Cards: b.cards, Transactions: b.transactions,
		APIKeys: b.apiKeys, KYC: b.kyc, Wallets: b.wallets, Requisites: b.requisites, Invoices: b.invoices, Limits: b.limits}
}

// total is how many calls the banking upstream got.
func (b *fakeBanking) total() int {
	n := 0
	for _, s := range []*fakeService{&b.auth.fakeService, &b.persons.fakeService, &b.corporations.fakeService,
		&b.apiKeys.fakeService, &b.cards.fakeService, &b.kyc.fakeService, &b.feedback.fakeService, &b.lookup.fakeService,
		&b.wallets.fakeService, &b.requisites.fakeService, &b.transactions.fakeService, &b.invoices.fakeService,
		&b.limits.fakeService, &b.reports.fakeService} {
		n += s.total()
	}
	return n
}

// tokenFor is p's access token, registered as p's.
func (b *fakeBanking) tokenFor(p principal) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tok := "bt-" + string(p.kind) + "-" + p.id
	b.callers[tok] = p
	return tok
}

// caller is who the call's access token signs in, as the upstream knows
// it; a call without a known token is the upstream's 401.
func (b *fakeBanking) caller(ctx context.Context) (principal, error) {
	ts := banking.TokenSourceFrom(ctx)
	if ts == nil {
		return principal{}, bankingRejection(http.StatusUnauthorized, 0, "", "no access token")
	}
	tok, err := ts.Token(ctx)
	if err != nil {
		return principal{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.callers[tok]
	if !ok {
		return principal{}, bankingRejection(http.StatusUnauthorized, 0, "", "invalid access token")
	}
	return p, nil
}

// offset refuses a page past the first where the upstream has no offset
// paging, as the client does before any call.
func (b *fakeBanking) offset(opts *banking.ListOptions) error {
	if b.specOnly && opts != nil && opts.Offset > 0 {
		return banking.ErrOffsetNotShown
	}
	return nil
}

// fakeAuth signs in the accounts of fakeBanking.accounts with
// demoPassword, with no two-factor step.
type fakeAuth struct {
	fakeService
	b      *fakeBanking
	forgot []string
}

func (f *fakeAuth) signIn(ctx context.Context, kind session.Kind, in banking.SignInRequest) (*banking.SignInResult, error) {
	f.b.mu.Lock()
	p, ok := f.b.accounts[in.Email]
	f.b.mu.Unlock()
	if !ok || p.kind != kind || in.Password != demoPassword {
		return nil, bankingRejection(http.StatusUnauthorized, banking.CodeInvalidValue, "password", "wrong e-mail or password")
	}
	tok := f.b.tokenFor(p)
	if ts := banking.TokenSourceFrom(ctx); ts != nil {
		if err := ts.SetToken(ctx, tok); err != nil {
			return nil, err
		}
	}
	return &banking.SignInResult{Token: banking.Secret(tok)}, nil
}

func (f *fakeAuth) SignInStaff(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error) {
	if err := f.enter("SignInStaff"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.Staff, in)
}

func (f *fakeAuth) SignInPerson(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error) {
	if err := f.enter("SignInPerson"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.Person, in)
}

func (f *fakeAuth) SignInIntroducer(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error) {
	if err := f.enter("SignInIntroducer"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.Introducer, in)
}

func (f *fakeAuth) SignInAPIKey(ctx context.Context, key banking.Secret) (*banking.SignInResult, error) {
	if err := f.enter("SignInAPIKey"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.APIClient, banking.SignInRequest{Email: "key:" + string(key), Password: demoPassword})
}

func (f *fakeAuth) ForgotPassword(_ context.Context, email string) error {
	if err := f.enter("ForgotPassword"); err != nil {
		return err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.forgot = append(f.forgot, email)
	return nil
}

func (f *fakeAuth) RecoverPassword(context.Context, banking.Secret, string) error {
	if err := f.enter("RecoverPassword"); err != nil {
		return err
	}
	return f.notFaked("RecoverPassword")
}

// fakePersons holds persons in creation order.
type fakePersons struct {
	fakeService
	b    *fakeBanking
	list []*banking.Person
	seq  int
}

// add stores p as a person of corporation corpID.
func (f *fakePersons) add(corpID string, p *banking.Person) {
	f.data.Lock()
	defer f.data.Unlock()
	p.Account = banking.Account{ID: corpID, CorporationID: corpID, Raw: []byte(`{"corporation_id":"` + corpID + `"}`)}
	f.list = append(f.list, p)
}

func (f *fakePersons) find(id string) *banking.Person {
	for _, p := range f.list {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func clonePerson(p *banking.Person) *banking.Person { c := *p; return &c }

func (f *fakePersons) Get(_ context.Context, id string) (*banking.Person, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if p := f.find(id); p != nil {
		return clonePerson(p), nil
	}
	return nil, bankingNotFound()
}

// List pages every person, in creation order.
func (f *fakePersons) List(_ context.Context, opts *banking.ListOptions) (*banking.PersonList, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	if err := f.b.offset(opts); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	all := make([]*banking.Person, len(f.list))
	for i, p := range f.list {
		all[i] = clonePerson(p)
	}
	list, meta := page(all, opts)
	return &banking.PersonList{List: list, Meta: meta}, nil
}

// Me is the calling person.
func (f *fakePersons) Me(ctx context.Context) (*banking.Person, error) {
	if err := f.enter("Me"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if p := f.find(who.personID); p != nil {
		return clonePerson(p), nil
	}
	return nil, bankingRejection(http.StatusForbidden, 0, "", "not a person")
}

// Create adds a person to the caller's corporation.
func (f *fakePersons) Create(ctx context.Context, in *banking.PersonCreateRequest) (*banking.Person, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	f.seq++
	p := &banking.Person{ID: fmt.Sprintf("person-new-%d", f.seq), FirstName: in.FirstName, LastName: in.LastName, Email: in.Email}
	f.data.Unlock()
	f.add(who.corporationID, p)
	return clonePerson(p), nil
}

func (f *fakePersons) Update(_ context.Context, id string, in *banking.PersonUpdateRequest) (*banking.Person, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	p := f.find(id)
	if p == nil {
		return nil, bankingNotFound()
	}
	if in.FirstName != nil {
		p.FirstName = *in.FirstName
	}
	if in.LastName != nil {
		p.LastName = *in.LastName
	}
	return clonePerson(p), nil
}

func (f *fakePersons) UpdateMe(context.Context, *banking.MeUpdateRequest) (*banking.Person, error) {
	if err := f.enter("UpdateMe"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("UpdateMe")
}

func (f *fakePersons) setBlocked(id string, blocked bool) (string, error) {
	f.data.Lock()
	defer f.data.Unlock()
	p := f.find(id)
	if p == nil {
		return "", bankingNotFound()
	}
	p.IsBlocked = blocked
	return id, nil
}

func (f *fakePersons) Block(_ context.Context, id string) (string, error) {
	if err := f.enter("Block"); err != nil {
		return "", err
	}
	return f.setBlocked(id, true)
}

func (f *fakePersons) Restore(_ context.Context, id string) (string, error) {
	if err := f.enter("Restore"); err != nil {
		return "", err
	}
	return f.setBlocked(id, false)
}

func (f *fakePersons) ChangeMyPhone(context.Context, banking.PhoneChange) (*banking.PhoneChangeResult, error) {
	if err := f.enter("ChangeMyPhone"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("ChangeMyPhone")
}

// fakeCorporations holds corporations in creation order.
type fakeCorporations struct {
	fakeService
	b        *fakeBanking
	list     []*banking.Corporation
	settings map[string]*banking.CorporationSettings
}

// add stores c as the upstream's.
func (f *fakeCorporations) add(c *banking.Corporation) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, c)
}

func (f *fakeCorporations) find(id string) *banking.Corporation {
	for _, c := range f.list {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func cloneCorporation(c *banking.Corporation) *banking.Corporation { o := *c; return &o }

// List pages the corporations the caller sees: staff and introducers all
// of them, anyone else their own.
func (f *fakeCorporations) List(ctx context.Context, opts *banking.ListOptions) (*banking.CorporationList, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.b.offset(opts); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	var seen []*banking.Corporation
	for _, c := range f.list {
		if who.kind == session.Staff || who.kind == session.Introducer || c.ID == who.corporationID {
			seen = append(seen, cloneCorporation(c))
		}
	}
	list, meta := page(seen, opts)
	return &banking.CorporationList{List: list, Meta: meta}, nil
}

// Current is the caller's corporation.
func (f *fakeCorporations) Current(ctx context.Context) (*banking.Corporation, error) {
	if err := f.enter("Current"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if c := f.find(who.corporationID); c != nil {
		return cloneCorporation(c), nil
	}
	return nil, bankingNotFound()
}

func (f *fakeCorporations) Settings(_ context.Context, id string) (*banking.CorporationSettings, error) {
	if err := f.enter("Settings"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if s, ok := f.settings[id]; ok {
		c := *s
		return &c, nil
	}
	if f.find(id) == nil {
		return nil, bankingNotFound()
	}
	return &banking.CorporationSettings{ID: id, AllowedPersonTypes: []string{"employee"}}, nil
}

func (f *fakeCorporations) SignUp(context.Context, *banking.CorporationSignUpRequest) (string, error) {
	if err := f.enter("SignUp"); err != nil {
		return "", err
	}
	return "", f.notFaked("SignUp")
}

func (f *fakeCorporations) Update(_ context.Context, id string, in *banking.CorporationUpdateRequest) (*banking.Corporation, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	c := f.find(id)
	if c == nil {
		return nil, bankingNotFound()
	}
	if in.Name != nil {
		c.Name = *in.Name
	}
	if in.Email != nil {
		c.Email = *in.Email
	}
	return cloneCorporation(c), nil
}

func (f *fakeCorporations) UpdateSettings(_ context.Context, id string, in *banking.CorporationSettingsUpdate) (*banking.CorporationSettings, error) {
	if err := f.enter("UpdateSettings"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	s := &banking.CorporationSettings{ID: id, AllowedPersonTypes: slices.Clone(in.AllowedPersonTypes)}
	f.settings[id] = s
	c := *s
	return &c, nil
}

// fakeCorpList holds one kind of record per corporation; its List is the
// corporation's records, and a service with changes of its own embeds it.
type fakeCorpList[T any] struct {
	fakeService
	byCorp map[string][]*T
}

func newFakeCorpList[T any](name string) *fakeCorpList[T] {
	return &fakeCorpList[T]{fakeService: newFakeService(name), byCorp: map[string][]*T{}}
}

// add stores v as a record of corporation corpID.
func (f *fakeCorpList[T]) add(corpID string, v *T) {
	f.data.Lock()
	defer f.data.Unlock()
	f.byCorp[corpID] = append(f.byCorp[corpID], v)
}

func (f *fakeCorpList[T]) List(_ context.Context, corpID string) ([]*T, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	out := make([]*T, 0, len(f.byCorp[corpID]))
	for _, v := range f.byCorp[corpID] {
		c := *v
		out = append(out, &c)
	}
	return out, nil
}

// fakeAPIKeys holds API keys per corporation.
type fakeAPIKeys struct {
	*fakeCorpList[banking.APIKey]
	seq int
}

func (f *fakeAPIKeys) Create(_ context.Context, corpID, name string) (*banking.APIKey, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	f.data.Lock()
	f.seq++
	k := &banking.APIKey{ID: fmt.Sprintf("key-new-%d", f.seq), Name: name, PrivateKey: banking.Secret(fmt.Sprintf("sk-new-%d", f.seq))}
	f.data.Unlock()
	f.add(corpID, k)
	c := *k
	return &c, nil
}

func (f *fakeAPIKeys) Delete(_ context.Context, corpID, keyID string) (bool, error) {
	if err := f.enter("Delete"); err != nil {
		return false, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	n := len(f.byCorp[corpID])
	f.byCorp[corpID] = slices.DeleteFunc(f.byCorp[corpID], func(k *banking.APIKey) bool { return k.ID == keyID })
	if len(f.byCorp[corpID]) == n {
		return false, bankingNotFound()
	}
	return true, nil
}

// fakeKYC holds KYC documents per corporation; it changes none.
type fakeKYC struct {
	*fakeCorpList[banking.KYCDocument]
}

func (f *fakeKYC) Upload(context.Context, string, *banking.KYCUpload) (*banking.KYCDocument, error) {
	if err := f.enter("Upload"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Upload")
}

func (f *fakeKYC) Update(context.Context, string, string, *banking.KYCUpdateRequest) (*banking.KYCDocument, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Update")
}

func (f *fakeKYC) Delete(context.Context, string, string) (string, error) {
	if err := f.enter("Delete"); err != nil {
		return "", err
	}
	return "", f.notFaked("Delete")
}

// fakeRequisites holds wallet requisites per corporation; it changes none.
type fakeRequisites struct {
	*fakeCorpList[banking.Requisites]
}

func (f *fakeRequisites) Create(context.Context, string, *banking.RequisitesCreateRequest) ([]*banking.Requisites, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Create")
}

func (f *fakeRequisites) Attach(context.Context, string, *banking.RequisitesCreateRequest) ([]*banking.Requisites, error) {
	if err := f.enter("Attach"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Attach")
}

func (f *fakeRequisites) Delete(context.Context, string, string) (string, error) {
	if err := f.enter("Delete"); err != nil {
		return "", err
	}
	return "", f.notFaked("Delete")
}

// fakeLimits holds limits per corporation; it changes none.
type fakeLimits struct {
	*fakeCorpList[banking.Limit]
}

func (f *fakeLimits) Update(context.Context, string, string, *banking.LimitUpdate) (*banking.Limit, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Update")
}

func (f *fakeLimits) Delete(context.Context, string, string) (*banking.Limit, error) {
	if err := f.enter("Delete"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Delete")
}

// fakeWallets holds wallets per corporation.
type fakeWallets struct {
	*fakeCorpList[banking.Wallet]
}

// find is wallet id of any corporation, and its corporation.
func (f *fakeWallets) find(id string) (*banking.Wallet, string) {
	for corp, ws := range f.byCorp {
		for _, w := range ws {
			if w.ID == id {
				return w, corp
			}
		}
	}
	return nil, ""
}

func (f *fakeWallets) Create(context.Context, string, *banking.WalletCreateRequest) ([]*banking.Wallet, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Create")
}

// fakeCards holds cards; every caller sees all of them.
type fakeCards struct {
	fakeService
	b            *fakeBanking
	list         []*banking.Card
	transactions map[string][]*banking.CardTransaction
}

// add stores c as the upstream's.
func (f *fakeCards) add(c *banking.Card) {
	f.data.Lock()
	defer f.data.Unlock()
	f.list = append(f.list, c)
}

func (f *fakeCards) List(context.Context) ([]*banking.Card, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	out := make([]*banking.Card, len(f.list))
	for i, c := range f.list {
		o := *c
		out[i] = &o
	}
	return out, nil
}

func (f *fakeCards) Get(_ context.Context, id string) (*banking.Card, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	for _, c := range f.list {
		if c.ID == id {
			o := *c
			return &o, nil
		}
	}
	return nil, bankingNotFound()
}

func (f *fakeCards) Transactions(_ context.Context, id string, opts *banking.ListOptions) (*banking.CardTransactionList, error) {
	if err := f.enter("Transactions"); err != nil {
		return nil, err
	}
	if err := f.b.offset(opts); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	list, meta := page(f.transactions[id], opts)
	return &banking.CardTransactionList{List: list, Meta: meta}, nil
}

func (f *fakeCards) Credentials(context.Context, string) (*banking.CardCredentials, error) {
	if err := f.enter("Credentials"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Credentials")
}

func (f *fakeCards) Issue(context.Context, *banking.IssueCardRequest) (string, error) {
	if err := f.enter("Issue"); err != nil {
		return "", err
	}
	return "", f.notFaked("Issue")
}

func (f *fakeCards) Simulate(context.Context, *banking.SimulateCardRequest) (*banking.Authorisation, error) {
	if err := f.enter("Simulate"); err != nil {
		return nil, err
	}
	return nil, f.notFaked("Simulate")
}

// fakeFeedback records what was sent.
type fakeFeedback struct {
	fakeService
	sent []banking.FeedbackRequest
}

func (f *fakeFeedback) Send(_ context.Context, in *banking.FeedbackRequest) error {
	if err := f.enter("Send"); err != nil {
		return err
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.sent = append(f.sent, *in)
	return nil
}

// fakeLookup answers SEPA reachability from its map (false by default).
type fakeLookup struct {
	fakeService
	sepa map[string]bool
}

func (f *fakeLookup) IsSEPAEnabled(_ context.Context, _ string, iban string) (bool, error) {
	if err := f.enter("IsSEPAEnabled"); err != nil {
		return false, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	return f.sepa[iban], nil
}

// fakeTransactions makes conversions between the fake's wallets and lists
// a wallet's transactions, newest first.
type fakeTransactions struct {
	fakeService
	b        *fakeBanking
	byWallet map[string][]*banking.Transaction
	seq      int
}

// CreateConversion moves amount from the source wallet into the target
// (the corporation's wallet in the currency when none is named), at a
// rate of 1, approved at once, and refuses with the spec's 20002 past the
// source's funds.
func (f *fakeTransactions) CreateConversion(_ context.Context, in *banking.ConversionRequest) (*banking.Transaction, error) {
	if err := f.enter("CreateConversion"); err != nil {
		return nil, err
	}
	w := f.b.wallets
	w.data.Lock()
	defer w.data.Unlock()
	src, corp := w.find(in.SourceID)
	if src == nil {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeWalletNotFound, "source_id", "wallet not found")
	}
	var dst *banking.Wallet
	if in.TargetID != "" {
		dst, _ = w.find(in.TargetID)
	} else {
		for _, c := range w.byCorp[corp] {
			if c.Currency == in.Currency && c.ID != src.ID {
				dst = c
			}
		}
	}
	if dst == nil {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeWalletNotFound, "target_id", "wallet not found")
	}
	if src.Amount < in.Amount {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInsufficientFunds, "amount", "insufficient funds")
	}
	src.Amount -= in.Amount
	dst.Amount += in.Amount
	f.data.Lock()
	defer f.data.Unlock()
	f.seq++
	now := banking.Timestamp{Time: time.Now().UTC()}
	t := &banking.Transaction{ID: fmt.Sprintf("tx-%d", f.seq), Type: "convert", CreatedAt: now, UpdatedAt: now,
		SourceAmount: in.Amount, SourceCurrency: src.Currency, TargetAmount: in.Amount, TargetCurrency: in.Currency,
		SourceCounterpartyID: src.ID, TargetCounterpartyID: dst.ID, Status: []byte(`{"code":0}`)}
	for _, id := range []string{src.ID, dst.ID} {
		f.byWallet[id] = append([]*banking.Transaction{t}, f.byWallet[id]...)
	}
	c := *t
	return &c, nil
}

func (f *fakeTransactions) ListByWallet(_ context.Context, _ string, walletID string, opts *banking.ListOptions) (*banking.TransactionList, error) {
	if err := f.enter("ListByWallet"); err != nil {
		return nil, err
	}
	if f.b.specOnly {
		return nil, bankingNotFound() // the spec shows no such route
	}
	f.data.Lock()
	defer f.data.Unlock()
	list, meta := page(f.byWallet[walletID], opts)
	return &banking.TransactionList{List: list, Meta: meta}, nil
}

// fakeReports makes no reports.
type fakeReports struct{ fakeService }

func (f *fakeReports) StatementPDF(context.Context, string, *banking.StatementOptions) (string, error) {
	if err := f.enter("StatementPDF"); err != nil {
		return "", err
	}
	return "", f.notFaked("StatementPDF")
}

func (f *fakeReports) StatementCSV(context.Context, []string, *banking.StatementOptions) (string, error) {
	if err := f.enter("StatementCSV"); err != nil {
		return "", err
	}
	return "", f.notFaked("StatementCSV")
}

func (f *fakeReports) IntroducerFee(context.Context, string, time.Time, time.Time, []string) (string, error) {
	if err := f.enter("IntroducerFee"); err != nil {
		return "", err
	}
	return "", f.notFaked("IntroducerFee")
}
