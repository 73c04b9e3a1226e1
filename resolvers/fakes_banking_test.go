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

// fakeAuth signs in the accounts of fakeBanking.accounts with their
// password (demoPassword until changed), with an SMS step for the accounts
// a test gives a challenge (requireTwoFactor), answered by fakeSMSCode.
type fakeAuth struct {
	fakeService
	b      *fakeBanking
	forgot []string
	// twoFactor holds the challenge of each account (by e-mail) that
	// signs in with an SMS code.
	twoFactor map[string]*banking.TwoFactor
	// recoveries maps an unused recovery token to its e-mail, as the
	// upstream e-mails them on ForgotPassword.
	recoveries map[string]string
}

// fakeSMSCode is the code every fake two-factor challenge accepts.
const fakeSMSCode = "123456"

// requireTwoFactor makes the account of email answer its sign-in with tf
// until the code is given.
func (f *fakeAuth) requireTwoFactor(email string, tf banking.TwoFactor) {
	f.data.Lock()
	defer f.data.Unlock()
	if f.twoFactor == nil {
		f.twoFactor = map[string]*banking.TwoFactor{}
	}
	f.twoFactor[email] = &tf
}

// recoveryToken is the token the last ForgotPassword for email sent, "" if
// none.
func (f *fakeAuth) recoveryToken(email string) string {
	f.data.Lock()
	defer f.data.Unlock()
	for tok, e := range f.recoveries {
		if e == email {
			return tok
		}
	}
	return ""
}

// signIn checks the credentials as the upstream does: an unknown account or
// a wrong password is its 401 naming field; a right one of an account with
// a challenge is the challenge until the code comes (a wrong code or
// challenge id is a 400 on code).
func (f *fakeAuth) signIn(ctx context.Context, kind session.Kind, in banking.SignInRequest, field string) (*banking.SignInResult, error) {
	f.b.mu.Lock()
	p, ok := f.b.accounts[in.Email]
	f.b.mu.Unlock()
	if !ok || p.kind != kind || in.Password != f.b.persons.passwordOf(p.id) {
		return nil, bankingRejection(http.StatusUnauthorized, banking.CodeInvalidValue, field, "wrong credentials")
	}
	f.data.Lock()
	tf := f.twoFactor[in.Email]
	f.data.Unlock()
	if tf != nil {
		switch {
		case in.TwoFactorCode == "":
			c := *tf
			return &banking.SignInResult{TwoFactor: &c}, nil
		case in.TwoFactorCode != fakeSMSCode || in.ChallengeID != tf.ChallengeID:
			return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "code", "invalid code")
		}
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
	return f.signIn(ctx, session.Staff, in, "password")
}

func (f *fakeAuth) SignInPerson(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error) {
	if err := f.enter("SignInPerson"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.Person, in, "password")
}

func (f *fakeAuth) SignInIntroducer(ctx context.Context, in banking.SignInRequest) (*banking.SignInResult, error) {
	if err := f.enter("SignInIntroducer"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.Introducer, in, "password")
}

func (f *fakeAuth) SignInAPIKey(ctx context.Context, key banking.Secret) (*banking.SignInResult, error) {
	if err := f.enter("SignInAPIKey"); err != nil {
		return nil, err
	}
	return f.signIn(ctx, session.APIClient, banking.SignInRequest{Email: "key:" + string(key), Password: demoPassword}, "apiKey")
}

// ForgotPassword answers the same whether the e-mail is known or not; a
// known one gets a recovery token.
func (f *fakeAuth) ForgotPassword(_ context.Context, email string) error {
	if err := f.enter("ForgotPassword"); err != nil {
		return err
	}
	f.b.mu.Lock()
	_, known := f.b.accounts[email]
	f.b.mu.Unlock()
	f.data.Lock()
	defer f.data.Unlock()
	f.forgot = append(f.forgot, email)
	if known {
		if f.recoveries == nil {
			f.recoveries = map[string]string{}
		}
		f.recoveries[fmt.Sprintf("rec-%d", len(f.forgot))] = email
	}
	return nil
}

// RecoverPassword sets the password of the token's account; each token
// works once, and an unknown or used one is the upstream's 400 on token.
func (f *fakeAuth) RecoverPassword(_ context.Context, token banking.Secret, password string) error {
	if err := f.enter("RecoverPassword"); err != nil {
		return err
	}
	f.data.Lock()
	email, ok := f.recoveries[string(token)]
	delete(f.recoveries, string(token))
	f.data.Unlock()
	if !ok {
		return bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "token", "invalid or used token")
	}
	f.b.mu.Lock()
	p := f.b.accounts[email]
	f.b.mu.Unlock()
	f.b.persons.setPassword(p.id, password)
	return nil
}

// fakePersons holds persons in creation order, scoped as the upstream
// scopes them: staff see every person, persons and API clients those of
// their corporation (anyone else's is a 404), introducers none (403).
type fakePersons struct {
	fakeService
	b    *fakeBanking
	list []*banking.Person
	seq  int
	// passwords are the persons' (and other accounts') passwords that
	// are no longer demoPassword, by principal id.
	passwords map[string]string
	// phones are the phone changes waiting for their code, by person id.
	phones map[string]string
}

// add stores p as a person of corporation corpID.
func (f *fakePersons) add(corpID string, p *banking.Person) {
	f.data.Lock()
	defer f.data.Unlock()
	f.addLocked(corpID, p)
}

func (f *fakePersons) addLocked(corpID string, p *banking.Person) {
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

// passwordOf is the password of the account with principal id.
func (f *fakePersons) passwordOf(id string) string {
	f.data.Lock()
	defer f.data.Unlock()
	if pw, ok := f.passwords[id]; ok {
		return pw
	}
	return demoPassword
}

// setPassword changes the password of the account with principal id.
func (f *fakePersons) setPassword(id, pw string) {
	f.data.Lock()
	defer f.data.Unlock()
	f.setPasswordLocked(id, pw)
}

func (f *fakePersons) setPasswordLocked(id, pw string) {
	if f.passwords == nil {
		f.passwords = map[string]string{}
	}
	f.passwords[id] = pw
}

// checkCurrentLocked is the upstream's check of a current password: wrong
// is a 400 on current_password.
func (f *fakePersons) checkCurrentLocked(id string, current *string) error {
	want, ok := f.passwords[id]
	if !ok {
		want = demoPassword
	}
	if current == nil || *current != want {
		return bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "current_password", "current password is wrong")
	}
	return nil
}

func clonePerson(p *banking.Person) *banking.Person { c := *p; return &c }

// sees reports whether who may see p, and the upstream's refusal if not.
func sees(who principal, p *banking.Person) error {
	switch {
	case who.kind == session.Introducer:
		return bankingRejection(http.StatusForbidden, 0, "", "introducers cannot manage persons")
	case p == nil || (who.kind != session.Staff && p.Account.CorporationID != who.corporationID):
		return bankingNotFound()
	}
	return nil
}

// scopedLocked is person id as the caller may see it.
func (f *fakePersons) scopedLocked(ctx context.Context, id string) (principal, *banking.Person, error) {
	who, err := f.b.caller(ctx)
	if err != nil {
		return who, nil, err
	}
	p := f.find(id)
	if err := sees(who, p); err != nil {
		return who, nil, err
	}
	return who, p, nil
}

func (f *fakePersons) Get(ctx context.Context, id string) (*banking.Person, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	_, p, err := f.scopedLocked(ctx, id)
	if err != nil {
		return nil, err
	}
	return clonePerson(p), nil
}

// List pages the persons the caller sees, in creation order.
func (f *fakePersons) List(ctx context.Context, opts *banking.ListOptions) (*banking.PersonList, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	if who.kind == session.Introducer {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "introducers cannot manage persons")
	}
	if err := f.b.offset(opts); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	var all []*banking.Person
	for _, p := range f.list {
		if sees(who, p) == nil {
			all = append(all, clonePerson(p))
		}
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
	return nil, bankingRejection(http.StatusForbidden, 0, "", "only persons have a profile here")
}

// Create adds a person to the caller's corporation, or for staff to the
// one the request names; an e-mail already taken is the upstream's 409.
func (f *fakePersons) Create(ctx context.Context, in *banking.PersonCreateRequest) (*banking.Person, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	corp := who.corporationID
	switch {
	case who.kind == session.Introducer:
		return nil, bankingRejection(http.StatusForbidden, 0, "", "introducers cannot manage persons")
	case who.kind == session.Staff && in.AccountID == "":
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeRequired, "account_id", "account_id is required")
	case who.kind == session.Staff:
		corp = in.AccountID
	}
	f.data.Lock()
	defer f.data.Unlock()
	for _, p := range f.list {
		if in.Email != "" && p.Email == in.Email {
			return nil, bankingRejection(http.StatusConflict, banking.CodeInvalidValue, "email", "e-mail is already taken")
		}
	}
	f.seq++
	p := &banking.Person{ID: fmt.Sprintf("person-new-%d", f.seq), FirstName: in.FirstName, LastName: in.LastName, Email: in.Email,
		Gender: in.Gender, IsUBO: in.IsUBO, IsDirector: in.IsDirector, Type: in.Type, PersonContact: in.PersonContact}
	f.addLocked(corp, p)
	return clonePerson(p), nil
}

// Update changes the fields it is sent of a person the caller sees; a
// password changed by the person themselves needs the current one.
func (f *fakePersons) Update(ctx context.Context, id string, in *banking.PersonUpdateRequest) (*banking.Person, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	who, p, err := f.scopedLocked(ctx, id)
	if err != nil {
		return nil, err
	}
	self := who.kind == session.Person && who.personID == id
	switch {
	case who.kind != session.Staff && (in.Email != nil || in.Phone != nil || in.Is2FAEnabled != nil):
		return nil, bankingRejection(http.StatusForbidden, 0, "", "can be changed by staff only")
	case in.Password != nil && who.kind != session.Staff && !self:
		return nil, bankingRejection(http.StatusForbidden, 0, "password", "only staff or the person themselves can change a password")
	case in.Password != nil && self:
		if err := f.checkCurrentLocked(id, in.CurrentPassword); err != nil {
			return nil, err
		}
	}
	set(&p.FirstName, in.FirstName)
	set(&p.LastName, in.LastName)
	set(&p.City, in.City)
	set(&p.Email, in.Email)
	set(&p.Phone, in.Phone)
	if in.Ownership != nil {
		o := *in.Ownership
		p.Ownership = &o
	}
	if in.Roles != nil {
		p.Roles = rawRoles(*in.Roles)
	}
	if in.Password != nil {
		f.setPasswordLocked(id, *in.Password)
	}
	return clonePerson(p), nil
}

// UpdateMe changes the calling person (persons only).
func (f *fakePersons) UpdateMe(ctx context.Context, in *banking.MeUpdateRequest) (*banking.Person, error) {
	if err := f.enter("UpdateMe"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	p := f.find(who.personID)
	if p == nil {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "only persons have a profile here")
	}
	if in.Password != nil {
		if err := f.checkCurrentLocked(p.ID, in.CurrentPassword); err != nil {
			return nil, err
		}
		f.setPasswordLocked(p.ID, *in.Password)
	}
	set(&p.Gender, in.Gender)
	set(&p.OtherPhone, in.OtherPhone)
	if in.IsUBO != nil {
		p.IsUBO = *in.IsUBO
	}
	if in.Roles != nil {
		p.Roles = rawRoles(*in.Roles)
	}
	return clonePerson(p), nil
}

// set sets *dst to *v when v is given.
func set(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// setBlocked moves a person between active and blocked (deleted_at set),
// as the caller may: a person never blocks themselves.
func (f *fakePersons) setBlocked(ctx context.Context, id string, blocked bool) (string, error) {
	f.data.Lock()
	defer f.data.Unlock()
	who, p, err := f.scopedLocked(ctx, id)
	if err != nil {
		return "", err
	}
	if blocked && who.kind == session.Person && who.personID == id {
		return "", bankingRejection(http.StatusForbidden, 0, "", "a person cannot block themselves")
	}
	p.IsBlocked, p.DeletedAt = blocked, nil
	if blocked {
		p.DeletedAt = &banking.Timestamp{Time: time.Now().UTC()}
	}
	return id, nil
}

func (f *fakePersons) Block(ctx context.Context, id string) (string, error) {
	if err := f.enter("Block"); err != nil {
		return "", err
	}
	return f.setBlocked(ctx, id, true)
}

func (f *fakePersons) Restore(ctx context.Context, id string) (string, error) {
	if err := f.enter("Restore"); err != nil {
		return "", err
	}
	return f.setBlocked(ctx, id, false)
}

// ChangeMyPhone is the upstream's two steps: the phone and the right
// current password give a challenge for the new phone; fakeSMSCode then
// moves the phone.
func (f *fakePersons) ChangeMyPhone(ctx context.Context, in banking.PhoneChange) (*banking.PhoneChangeResult, error) {
	if err := f.enter("ChangeMyPhone"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	p := f.find(who.personID)
	if p == nil {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "only persons have a profile here")
	}
	if in.TwoFactorCode == "" {
		if err := f.checkCurrentLocked(p.ID, &in.CurrentPassword); err != nil {
			return nil, err
		}
		if f.phones == nil {
			f.phones = map[string]string{}
		}
		f.phones[p.ID] = in.Phone
		return &banking.PhoneChangeResult{TwoFactor: &banking.TwoFactor{TruncatedPhone: in.Phone[:min(5, len(in.Phone))] + "*****"}}, nil
	}
	phone, ok := f.phones[p.ID]
	if !ok || in.TwoFactorCode != fakeSMSCode {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "two_fa_code", "invalid code")
	}
	delete(f.phones, p.ID)
	p.Phone = phone
	return &banking.PhoneChangeResult{Person: clonePerson(p)}, nil
}

// fakeCorporations holds corporations in creation order, scoped as the
// upstream scopes them: staff and introducers see all of them, persons
// and API clients their own (anyone else's is a 404).
type fakeCorporations struct {
	fakeService
	b        *fakeBanking
	list     []*banking.Corporation
	settings map[string]*banking.CorporationSettings
	// settingsAnswerEmpty makes UpdateSettings answer no settings, which
	// the spec leaves open.
	settingsAnswerEmpty bool
	seq                 int
	// listed are the options of each List call, in order.
	listed []banking.ListOptions
}

// fakeCaptcha is the one captcha response the fake accepts, as the
// sandbox accepts its test token.
const fakeCaptcha = "sandbox-captcha-ok"

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

// seesCorporation reports whether who sees corporation id.
func seesCorporation(who principal, id string) bool {
	return who.kind == session.Staff || who.kind == session.Introducer || id == who.corporationID
}

// scopedLocked is corporation id as the caller may see it.
func (f *fakeCorporations) scopedLocked(ctx context.Context, id string) (principal, *banking.Corporation, error) {
	who, err := f.b.caller(ctx)
	if err != nil {
		return who, nil, err
	}
	c := f.find(id)
	if c == nil || !seesCorporation(who, id) {
		return who, nil, bankingNotFound()
	}
	return who, c, nil
}

func cloneCorporation(c *banking.Corporation) *banking.Corporation { o := *c; return &o }

// List pages the corporations the caller sees.
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
	if opts != nil {
		f.listed = append(f.listed, *opts)
	}
	var seen []*banking.Corporation
	for _, c := range f.list {
		if seesCorporation(who, c.ID) {
			seen = append(seen, cloneCorporation(c))
		}
	}
	list, meta := page(seen, opts)
	return &banking.CorporationList{List: list, Meta: meta}, nil
}

// Current is the caller's corporation; only persons and API clients have
// one (403).
func (f *fakeCorporations) Current(ctx context.Context) (*banking.Corporation, error) {
	if err := f.enter("Current"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	if who.corporationID == "" {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "only persons and API clients have a current corporation")
	}
	f.data.Lock()
	defer f.data.Unlock()
	if c := f.find(who.corporationID); c != nil {
		return cloneCorporation(c), nil
	}
	return nil, bankingNotFound()
}

// Settings are a corporation's the caller sees; EMPLOYEE only until
// changed.
func (f *fakeCorporations) Settings(ctx context.Context, id string) (*banking.CorporationSettings, error) {
	if err := f.enter("Settings"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if _, _, err := f.scopedLocked(ctx, id); err != nil {
		return nil, err
	}
	if s, ok := f.settings[id]; ok {
		c := *s
		c.AllowedPersonTypes = slices.Clone(s.AllowedPersonTypes)
		return &c, nil
	}
	return &banking.CorporationSettings{ID: id, AllowedPersonTypes: []string{"employee"}}, nil
}

// SignUp registers a corporation with the captcha test token; an e-mail
// already signed in with is the upstream's 409.
func (f *fakeCorporations) SignUp(_ context.Context, in *banking.CorporationSignUpRequest) (string, error) {
	if err := f.enter("SignUp"); err != nil {
		return "", err
	}
	if in.Captcha != fakeCaptcha {
		return "", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "recaptcha", "captcha verification failed")
	}
	f.b.mu.Lock()
	_, taken := f.b.accounts[in.Email]
	f.b.mu.Unlock()
	if taken {
		return "", bankingRejection(http.StatusConflict, banking.CodeInvalidValue, "email", "e-mail is already taken")
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.seq++
	c := &banking.Corporation{ID: fmt.Sprintf("corp-new-%d", f.seq), Name: in.CompanyName, Email: in.Email, Country: in.Country, Currency: "EUR"}
	f.list = append(f.list, c)
	return c.ID, nil
}

// Update changes a corporation (staff only).
func (f *fakeCorporations) Update(ctx context.Context, id string, in *banking.CorporationUpdateRequest) (*banking.Corporation, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	who, c, err := f.scopedLocked(ctx, id)
	if err != nil {
		return nil, err
	}
	if who.kind != session.Staff {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "corporation update is for staff only")
	}
	set(&c.Name, in.Name)
	set(&c.Email, in.Email)
	set(&c.Country, in.Country)
	if in.City != nil {
		city := *in.City
		c.City = &city
	}
	if in.IsOnboarded != nil {
		if *in.IsOnboarded && !c.IsOnboarded {
			c.OnboardedAt = banking.Timestamp{Time: time.Now().UTC()}
		}
		c.IsOnboarded = *in.IsOnboarded
	}
	return cloneCorporation(c), nil
}

// UpdateSettings sets the allowed person types of a corporation the
// caller sees (not introducers); employee is always kept.
func (f *fakeCorporations) UpdateSettings(ctx context.Context, id string, in *banking.CorporationSettingsUpdate) (*banking.CorporationSettings, error) {
	if err := f.enter("UpdateSettings"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	who, _, err := f.scopedLocked(ctx, id)
	if err != nil {
		return nil, err
	}
	if who.kind == session.Introducer {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "permission persons_management.write is required")
	}
	types := []string{"employee"}
	for _, t := range in.AllowedPersonTypes {
		switch t {
		case "employee":
		case "consumer":
			types = append(types, t)
		default:
			return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "allowed_person_types", "allowed_person_types holds employee or consumer")
		}
	}
	s := &banking.CorporationSettings{ID: id, AllowedPersonTypes: types}
	f.settings[id] = s
	if f.settingsAnswerEmpty {
		return nil, nil
	}
	c := *s
	c.AllowedPersonTypes = slices.Clone(types)
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

// fakeKYC holds KYC documents per corporation. It knows no callers: the
// gateway's own checks (the acting corporation, staff-only verification)
// come first, and a document of another corporation is not found in the
// one named. An upload is recognised by its first bytes, as the upstream
// recognises it by its content, never by its name or declared type.
type fakeKYC struct {
	*fakeCorpList[banking.KYCDocument]
}

// findLocked is document id of corporation corpID.
func (f *fakeKYC) findLocked(corpID, id string) *banking.KYCDocument {
	for _, d := range f.byCorp[corpID] {
		if d.ID == id {
			return d
		}
	}
	return nil
}

// Upload stores the document: the file read to its end, recognised by its
// content, of type corporate.
func (f *fakeKYC) Upload(_ context.Context, corpID string, in *banking.KYCUpload) (*banking.KYCDocument, error) {
	if err := f.enter("Upload"); err != nil {
		return nil, err
	}
	data, err := readUpload(in.File)
	if err != nil {
		return nil, err
	}
	format := kycSniff(data)
	switch {
	case format == "":
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "file", "file must be JPEG, PNG, PDF, DOC, DOCX, XLS or XLSX")
	case in.Type != "corporate":
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "type", "type must be corporate")
	}
	f.data.Lock()
	defer f.data.Unlock()
	n := 1
	for _, docs := range f.byCorp {
		n += len(docs)
	}
	for f.findLocked(corpID, fmt.Sprintf("kyc-new-%d", n)) != nil {
		n++
	}
	now := banking.Timestamp{Time: time.Now().UTC()}
	d := &banking.KYCDocument{ID: fmt.Sprintf("kyc-new-%d", n), Name: in.Filename, VerifyingStatus: banking.KYCNoMark, Type: in.Type,
		Path: fmt.Sprintf("kyc-documents/%s/kyc-new-%d.%s", corpID, n, format), CreatedAt: now, UpdatedAt: now}
	f.byCorp[corpID] = append(f.byCorp[corpID], d)
	c := *d
	return &c, nil
}

// Update changes a document's name, expiry and verification.
func (f *fakeKYC) Update(_ context.Context, corpID, id string, in *banking.KYCUpdateRequest) (*banking.KYCDocument, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	d := f.findLocked(corpID, id)
	if d == nil {
		return nil, bankingNotFound()
	}
	if s := in.VerifyingStatus; s != nil && *s != banking.KYCNoMark && *s != banking.KYCVerified && *s != banking.KYCNotVerified {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "verifying_status", "unknown status")
	}
	set(&d.Name, in.Name)
	set(&d.VerifyingStatus, in.VerifyingStatus)
	if in.ExpirationAt != nil {
		e := *in.ExpirationAt
		d.ExpirationAt = &e
	}
	d.UpdatedAt = banking.Timestamp{Time: time.Now().UTC()}
	c := *d
	return &c, nil
}

// Delete removes a document and answers its id.
func (f *fakeKYC) Delete(_ context.Context, corpID, id string) (string, error) {
	if err := f.enter("Delete"); err != nil {
		return "", err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if f.findLocked(corpID, id) == nil {
		return "", bankingNotFound()
	}
	f.byCorp[corpID] = slices.DeleteFunc(f.byCorp[corpID], func(d *banking.KYCDocument) bool { return d.ID == id })
	return id, nil
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

// fakeFeedback records what was sent with the captcha test token.
type fakeFeedback struct {
	fakeService
	sent []banking.FeedbackRequest
}

func (f *fakeFeedback) Send(_ context.Context, in *banking.FeedbackRequest) error {
	if err := f.enter("Send"); err != nil {
		return err
	}
	if in.Captcha != fakeCaptcha {
		return bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "recaptcha", "captcha verification failed")
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
