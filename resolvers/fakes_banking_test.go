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
	b.wallets = &fakeWallets{fakeCorpList: newFakeCorpList[banking.Wallet]("banking.Wallets"), b: b}
	b.requisites = &fakeRequisites{fakeCorpList: newFakeCorpList[banking.Requisites]("banking.Requisites"), b: b}
	b.transactions = &fakeTransactions{fakeService: newFakeService("banking.Transactions"), b: b, byWallet: map[string][]*banking.Transaction{}}
	b.invoices = newFakeCorpList[banking.Invoice]("banking.Invoices")
	b.limits = &fakeLimits{fakeCorpList: newFakeCorpList[banking.Limit]("banking.Limits"), b: b}
	b.reports = &fakeReports{fakeService: newFakeService("banking.Reports"), b: b}
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
	return f.walList(corpID), nil
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

// fakeRequisites holds wallet requisites per corporation, each attached
// to at most one wallet (whose Requisites it is then among), as the
// sandbox keeps them.
type fakeRequisites struct {
	*fakeCorpList[banking.Requisites]
	b   *fakeBanking
	seq int
}

// List is the corporation's requisites, to a caller who sees it.
func (f *fakeRequisites) List(ctx context.Context, corpID string) ([]*banking.Requisites, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	return f.walList(corpID), nil
}

// newRequisites makes one SEPA record of in (an IBAN of the bank's for
// automatic ones) and stores it under the corporation.
func (f *fakeRequisites) newRequisites(corpID string, in *banking.RequisitesCreateRequest) *banking.Requisites {
	f.data.Lock()
	f.seq++
	q := &banking.Requisites{ID: fmt.Sprintf("req-new-%d", f.seq), Type: "sepa", CreatedAt: banking.Timestamp{Time: time.Now().UTC()}}
	if in.SEPA != nil && in.ManualOrAutomatic == "manual" {
		q.Number, q.Code = in.SEPA.Number, in.SEPA.Code
	} else {
		q.Number, q.Code = walIBAN("LV", fmt.Sprintf("SAND%013d", f.seq)), "SANDLV22"
	}
	f.data.Unlock()
	f.add(corpID, q)
	return q
}

// requisitesRefusal is what the sandbox refuses of a requisites body.
func requisitesRefusal(in *banking.RequisitesCreateRequest, adapters ...string) error {
	switch {
	case !slices.Contains(adapters, in.Adapter):
		return bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "adapter", "adapter is not allowed here")
	case in.ManualOrAutomatic == "manual" && in.SEPA == nil:
		return bankingRejection(http.StatusBadRequest, banking.CodeRequired, "sepa.number", "sepa.number is required")
	case in.ManualOrAutomatic != "manual" && in.SEPA != nil:
		return bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "sepa", "sepa is for manual requisites only")
	}
	return nil
}

// Create makes one unattached record (adapter_a or adapter_b) and answers
// it in an array.
func (f *fakeRequisites) Create(ctx context.Context, corpID string, in *banking.RequisitesCreateRequest) ([]*banking.Requisites, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	if err := requisitesRefusal(in, "adapter_a", "adapter_b"); err != nil {
		return nil, err
	}
	q := *f.newRequisites(corpID, in)
	return []*banking.Requisites{&q}, nil
}

// Attach makes a record and attaches it to a real adapter_a wallet of the
// corporation; it answers the wallet's requisites.
func (f *fakeRequisites) Attach(ctx context.Context, corpID string, in *banking.RequisitesCreateRequest) ([]*banking.Requisites, error) {
	if err := f.enter("Attach"); err != nil {
		return nil, err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	if err := requisitesRefusal(in, "adapter_a"); err != nil {
		return nil, err
	}
	w := f.b.wallets
	w.data.Lock()
	wl, owner := w.find(in.WalletID)
	switch {
	case wl == nil || owner != corpID:
		w.data.Unlock()
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "wallet_id", "wallet not found in this corporation")
	case wl.Adapter != "adapter_a":
		w.data.Unlock()
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "wallet_id", "requisites attach to adapter_a wallets only")
	}
	w.data.Unlock()
	q := f.newRequisites(corpID, in)
	w.data.Lock()
	defer w.data.Unlock()
	c := *q
	wl.Requisites = append(wl.Requisites, &c)
	out := make([]*banking.Requisites, len(wl.Requisites))
	for i, r := range wl.Requisites {
		o := *r
		out[i] = &o
	}
	return out, nil
}

// Delete removes a record of the corporation and detaches it from its
// wallet; it answers the record's id.
func (f *fakeRequisites) Delete(ctx context.Context, corpID, id string) (string, error) {
	if err := f.enter("Delete"); err != nil {
		return "", err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return "", err
	}
	f.data.Lock()
	n := len(f.byCorp[corpID])
	f.byCorp[corpID] = slices.DeleteFunc(f.byCorp[corpID], func(q *banking.Requisites) bool { return q.ID == id })
	gone := len(f.byCorp[corpID]) < n
	f.data.Unlock()
	if !gone {
		return "", bankingNotFound()
	}
	w := f.b.wallets
	w.data.Lock()
	defer w.data.Unlock()
	for _, wl := range w.byCorp[corpID] {
		wl.Requisites = slices.DeleteFunc(wl.Requisites, func(q *banking.Requisites) bool { return q.ID == id })
	}
	return id, nil
}

// fakeLimits holds limits per corporation; staff change them.
type fakeLimits struct {
	*fakeCorpList[banking.Limit]
	b *fakeBanking
}

// List is the corporation's limits, to a caller who sees it.
func (f *fakeLimits) List(ctx context.Context, corpID string) ([]*banking.Limit, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	return f.walList(corpID), nil
}

// limitOf is limit id of the corporation, for a staff caller: 403 for
// anyone else, 404 for a limit the corporation does not have. Called with
// f.data held.
func (f *fakeLimits) limitOf(ctx context.Context, corpID, id string) (*banking.Limit, error) {
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	if who.kind != session.Staff {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "limits are changed by staff only")
	}
	for _, l := range f.byCorp[corpID] {
		if l.ID == id {
			return l, nil
		}
	}
	return nil, bankingNotFound()
}

// Update changes the given fields of the limit's set (absent ones stay)
// and its payment method and transaction type when given.
func (f *fakeLimits) Update(ctx context.Context, corpID, id string, in *banking.LimitUpdate) (*banking.Limit, error) {
	if err := f.enter("Update"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	l, err := f.limitOf(ctx, corpID, id)
	if err != nil {
		return nil, err
	}
	next := l.LimitSet
	if s := in.LimitSet; s != nil {
		for _, p := range []struct {
			dst **int64
			v   *int64
		}{
			{&next.DailySuccessfulVelocity, s.DailySuccessfulVelocity}, {&next.WeeklySuccessfulVelocity, s.WeeklySuccessfulVelocity},
			{&next.MonthlySuccessfulVelocity, s.MonthlySuccessfulVelocity}, {&next.AttemptVelocityPerHour, s.AttemptVelocityPerHour},
			{&next.MinimumAmount, s.MinimumAmount}, {&next.MaximumAmount, s.MaximumAmount}, {&next.DailyLimitAmount, s.DailyLimitAmount},
			{&next.WeeklyLimitAmount, s.WeeklyLimitAmount}, {&next.MonthlyLimitAmount, s.MonthlyLimitAmount},
		} {
			if p.v != nil {
				v := *p.v
				*p.dst = &v
			}
		}
	}
	if next.MinimumAmount != nil && next.MaximumAmount != nil && *next.MinimumAmount > *next.MaximumAmount {
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "limitSet.minimumAmount", "minimumAmount must not exceed maximumAmount")
	}
	if in.PaymentMethod != "" {
		l.PaymentMethod = in.PaymentMethod
	}
	if in.TransactionType != "" {
		l.TransactionType = in.TransactionType
	}
	l.LimitSet, l.UpdatedAt = next, banking.Timestamp{Time: time.Now().UTC()}
	c := *l
	return &c, nil
}

// Delete removes the limit and answers it.
func (f *fakeLimits) Delete(ctx context.Context, corpID, id string) (*banking.Limit, error) {
	if err := f.enter("Delete"); err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	l, err := f.limitOf(ctx, corpID, id)
	if err != nil {
		return nil, err
	}
	f.byCorp[corpID] = slices.DeleteFunc(f.byCorp[corpID], func(x *banking.Limit) bool { return x == l })
	c := *l
	return &c, nil
}

// fakeWallets holds wallets per corporation.
type fakeWallets struct {
	*fakeCorpList[banking.Wallet]
	b   *fakeBanking
	seq int
	// asked holds what each Create was asked, in order.
	asked []banking.WalletCreateRequest
}

// List is the corporation's wallets, to a caller who sees it.
func (f *fakeWallets) List(ctx context.Context, corpID string) ([]*banking.Wallet, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	return f.walList(corpID), nil
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

// Create makes wallets as the sandbox does (staff only): adapter_a one EUR
// wallet with SEPA requisites (the bank's IBAN unless manual), adapter_b one
// GBP wallet with ukLocal or EUR otherwise, adapter_c one per currency.
func (f *fakeWallets) Create(ctx context.Context, corpID string, in *banking.WalletCreateRequest) ([]*banking.Wallet, error) {
	if err := f.enter("Create"); err != nil {
		return nil, err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return nil, err
	}
	if who.kind != session.Staff {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "wallet creation is for staff only")
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	f.data.Lock()
	f.asked = append(f.asked, *in)
	f.data.Unlock()
	var currencies []string
	switch in.Adapter {
	case "adapter_a":
		currencies = []string{"EUR"}
	case "adapter_b":
		currencies = []string{"EUR"}
		if in.UKLocal != nil {
			currencies = []string{"GBP"}
		}
	case "adapter_c":
		currencies = in.Currencies
		if len(currencies) == 0 {
			return nil, bankingRejection(http.StatusBadRequest, banking.CodeRequired, "currencies", "currencies is required")
		}
	default:
		return nil, bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, "adapter", "adapter must be one of adapter_a, adapter_b, adapter_c")
	}
	var out []*banking.Wallet
	for _, cur := range currencies {
		f.data.Lock()
		f.seq++
		name := in.Name
		if name == "" {
			name = cur + " wallet"
		}
		w := &banking.Wallet{ID: fmt.Sprintf("wallet-new-%d", f.seq), Name: name, Currency: cur, Type: "real", Adapter: in.Adapter,
			CreatedAt: banking.Timestamp{Time: time.Now().UTC()}}
		if in.Purpose != "" {
			p := in.Purpose
			w.Purpose = &p
		}
		f.data.Unlock()
		if in.Adapter == "adapter_a" && (in.ManualOrAutomatic != "manual" || in.SEPA != nil) {
			req := &banking.RequisitesCreateRequest{Adapter: in.Adapter, ManualOrAutomatic: in.ManualOrAutomatic, SEPA: in.SEPA}
			q := *f.b.requisites.newRequisites(corpID, req)
			w.Requisites = []*banking.Requisites{&q}
		}
		f.add(corpID, w)
		c := *w
		out = append(out, &c)
	}
	return out, nil
}

// fakeCards holds cards of corporations, scoped as the sandbox scopes
// them: staff see every card, persons and API clients their corporation's,
// introducers none (403).
type fakeCards struct {
	fakeService
	b            *fakeBanking
	list         []*banking.Card
	transactions map[string][]*banking.CardTransaction
	// corp is each card's corporation, creds its PAN and CVC (the
	// sandbox's own, never in a listing); seq numbers issued cards.
	corp  map[string]string
	creds map[string]banking.CardCredentials
	seq   int
	// issued holds what each Issue was asked, in order.
	issued []banking.IssueCardRequest
	// decline, when set, is the code the next simulations on an ACTIVE
	// card are declined with (an issuer's own reasons).
	decline string
}

// add stores c as a card of the demo corporation.
func (f *fakeCards) add(c *banking.Card) { f.addTo(demoCorp, c) }

// addTo stores c as a card of corporation corpID.
func (f *fakeCards) addTo(corpID string, c *banking.Card) {
	f.data.Lock()
	defer f.data.Unlock()
	if f.corp == nil {
		f.corp, f.creds = map[string]string{}, map[string]banking.CardCredentials{}
	}
	f.corp[c.ID] = corpID
	f.creds[c.ID] = banking.CardCredentials{PAN: banking.Secret("5555444433331111"), CVC2: banking.Secret("123")}
	f.list = append(f.list, c)
}

// viewer is the caller, refused (403) when an introducer.
func (f *fakeCards) viewer(ctx context.Context) (principal, error) {
	who, err := f.b.caller(ctx)
	if err != nil {
		return who, err
	}
	if who.kind == session.Introducer {
		return who, bankingRejection(http.StatusForbidden, 0, "", "introducers cannot use cards")
	}
	return who, nil
}

// sees reports whether who may see card id. Called with f.data held.
func (f *fakeCards) sees(who principal, id string) bool {
	corp, ok := f.corp[id]
	return ok && (who.kind == session.Staff || corp == who.corporationID)
}

// scoped is card id as who sees it (404 when not). Called with f.data held.
func (f *fakeCards) scoped(who principal, id string) (*banking.Card, error) {
	for _, c := range f.list {
		if c.ID == id && f.sees(who, id) {
			return c, nil
		}
	}
	return nil, bankingNotFound()
}

func (f *fakeCards) List(ctx context.Context) ([]*banking.Card, error) {
	if err := f.enter("List"); err != nil {
		return nil, err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	out := []*banking.Card{}
	for _, c := range f.list {
		if f.sees(who, c.ID) {
			o := *c
			out = append(out, &o)
		}
	}
	return out, nil
}

func (f *fakeCards) Get(ctx context.Context, id string) (*banking.Card, error) {
	if err := f.enter("Get"); err != nil {
		return nil, err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	c, err := f.scoped(who, id)
	if err != nil {
		return nil, err
	}
	o := *c
	return &o, nil
}

// Transactions pages a card's transactions, newest first unless SortType
// is ASC.
func (f *fakeCards) Transactions(ctx context.Context, id string, opts *banking.ListOptions) (*banking.CardTransactionList, error) {
	if err := f.enter("Transactions"); err != nil {
		return nil, err
	}
	if err := f.b.offset(opts); err != nil {
		return nil, err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if _, err := f.scoped(who, id); err != nil {
		return nil, err
	}
	all := slices.Clone(f.transactions[id])
	if opts != nil && opts.SortType == banking.SortAsc {
		slices.Reverse(all)
	}
	list, meta := page(all, opts)
	return &banking.CardTransactionList{List: list, Meta: meta}, nil
}

// Credentials answers PAN and CVC to the card's own corporation only:
// staff see the card, not its secrets.
func (f *fakeCards) Credentials(ctx context.Context, id string) (*banking.CardCredentials, error) {
	if err := f.enter("Credentials"); err != nil {
		return nil, err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	if _, err := f.scoped(who, id); err != nil {
		return nil, err
	}
	if f.corp[id] != who.corporationID {
		return nil, bankingRejection(http.StatusForbidden, 0, "", "card credentials are shown to the card's corporation only")
	}
	c := f.creds[id]
	return &c, nil
}

// Issue checks what the sandbox checks against its state (the company is
// the caller's, the funding wallet a CARD wallet of it, the cardholder a
// person of it, not blocked) and makes an ACTIVE card.
func (f *fakeCards) Issue(ctx context.Context, in *banking.IssueCardRequest) (string, error) {
	if err := f.enter("Issue"); err != nil {
		return "", err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return "", err
	}
	invalid := func(field, msg string) (string, error) {
		return "", bankingRejection(http.StatusBadRequest, banking.CodeInvalidValue, field, msg)
	}
	corp := ""
	f.b.corporations.data.Lock()
	for _, c := range f.b.corporations.list {
		if c.ID == in.Company.ExternalID || (c.AccountID != "" && c.AccountID == in.Company.ExternalID) {
			corp = c.ID
		}
	}
	f.b.corporations.data.Unlock()
	if corp == "" || (who.kind != session.Staff && corp != who.corporationID) {
		return invalid("company.external_id", "company.external_id is not your corporate account")
	}
	f.b.wallets.data.Lock()
	w, owner := f.b.wallets.find(in.Card.FundingSourceID)
	cardWallet := w != nil && owner == corp && w.Purpose != nil && *w.Purpose == "CARD"
	f.b.wallets.data.Unlock()
	if !cardWallet {
		return invalid("card.funding_source_id", "card.funding_source_id is not a CARD wallet of the corporation")
	}
	f.b.persons.data.Lock()
	p := f.b.persons.find(in.Cardholder.ExternalID)
	holderOK := p != nil && p.Account.Corporation() == corp
	blocked := p != nil && p.IsBlocked
	f.b.persons.data.Unlock()
	switch {
	case !holderOK:
		return invalid("cardholder.external_id", "cardholder.external_id is not a person of the corporation")
	case blocked:
		return invalid("cardholder.external_id", "cardholder.external_id is a blocked person")
	}
	f.data.Lock()
	f.seq++
	id := fmt.Sprintf("card-new-%d", f.seq)
	f.issued = append(f.issued, *in)
	f.data.Unlock()
	now := banking.Timestamp{Time: time.Now().UTC()}
	f.addTo(corp, &banking.Card{ID: id, Status: "ACTIVE", Expiry: in.Card.Expiry, DisplayName: in.Card.DisplayName,
		FundingSourceID: in.Card.FundingSourceID, Type: in.Card.Type, Brand: in.Card.Brand, Region: in.Card.Region,
		Currency: in.Card.Currency, Cardholder: banking.CardholderRef{ExternalID: in.Cardholder.ExternalID, ID: "holder-" + id},
		EmbossedData: &banking.EmbossedData{FirstName: in.Cardholder.FirstName, LastName: in.Cardholder.LastName, CompanyName: in.Company.Name},
		PAN:          banking.MaskedPAN{BIN: "555544", LastFour: "1111"}, CreatedAt: now, ModifiedAt: now})
	return id, nil
}

// Simulate authorises an amount on an ACTIVE card within its funding
// wallet's balance (debiting it and listing the transaction), and declines
// otherwise with the sandbox's codes.
func (f *fakeCards) Simulate(ctx context.Context, in *banking.SimulateCardRequest) (*banking.Authorisation, error) {
	if err := f.enter("Simulate"); err != nil {
		return nil, err
	}
	who, err := f.viewer(ctx)
	if err != nil {
		return nil, err
	}
	f.data.Lock()
	defer f.data.Unlock()
	c, err := f.scoped(who, in.CardID)
	if err != nil {
		return nil, bankingRejection(http.StatusNotFound, 0, "card_id", "card not found")
	}
	switch c.Status {
	case "ACTIVE":
	case "LOST":
		return &banking.Authorisation{Code: "41"}, nil
	case "STOLEN":
		return &banking.Authorisation{Code: "43"}, nil
	default:
		return &banking.Authorisation{Code: "62"}, nil
	}
	if f.decline != "" {
		return &banking.Authorisation{Code: f.decline}, nil
	}
	if in.Amount <= 0 {
		return &banking.Authorisation{Code: "13"}, nil
	}
	w := f.b.wallets
	w.data.Lock()
	defer w.data.Unlock()
	wl, _ := w.find(c.FundingSourceID)
	if wl == nil || wl.Amount < in.Amount {
		return &banking.Authorisation{Code: "51"}, nil
	}
	wl.Amount -= in.Amount
	now := banking.Timestamp{Time: time.Now().UTC()}
	tx := &banking.CardTransaction{ID: fmt.Sprintf("ctx-%s-%d", c.ID, len(f.transactions[c.ID])+1), Type: "card-transaction",
		SourceAmount: in.Amount, SourceCurrency: in.Currency, Status: []byte(`{"code":0,"name":"APPROVED"}`),
		Meta: []byte(`{"description":"Sandbox card simulation","authorisation_code":"00"}`), CreatedAt: now, UpdatedAt: now}
	f.transactions[c.ID] = append([]*banking.CardTransaction{tx}, f.transactions[c.ID]...)
	return &banking.Authorisation{Authorised: true, Code: "00"}, nil
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
	// lose is how many of the next conversions are made and then answered
	// as unavailable: the answer lost after the upstream acted.
	lose int
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
	if f.lose > 0 {
		f.lose--
		return nil, unavailable("banking")
	}
	c := *t
	return &c, nil
}

// ListByWallet pages a wallet of a corporation the caller sees, newest
// first unless SortType is ASC; 404 for a wallet not of the corporation.
func (f *fakeTransactions) ListByWallet(ctx context.Context, corpID string, walletID string, opts *banking.ListOptions) (*banking.TransactionList, error) {
	if err := f.enter("ListByWallet"); err != nil {
		return nil, err
	}
	if f.b.specOnly {
		return nil, bankingNotFound() // the spec shows no such route
	}
	if err := f.b.walSees(ctx, corpID); err != nil {
		return nil, err
	}
	f.b.wallets.data.Lock()
	_, owner := f.b.wallets.find(walletID)
	f.b.wallets.data.Unlock()
	if owner != corpID {
		return nil, bankingNotFound()
	}
	f.data.Lock()
	defer f.data.Unlock()
	all := slices.Clone(f.byWallet[walletID])
	if opts != nil && opts.SortType == banking.SortAsc {
		slices.Reverse(all)
	}
	list, meta := page(all, opts)
	return &banking.TransactionList{List: list, Meta: meta}, nil
}

// fakeReports answers the path of a report built for what it was asked,
// which it records, with the sandbox's checks of who may ask.
type fakeReports struct {
	fakeService
	b *fakeBanking
	// asked holds each report's upstream arguments, in order.
	asked []reportAsked
}

// reportAsked is one report request as the upstream received it.
type reportAsked struct {
	kind    string
	wallets []string
	opts    banking.StatementOptions
	from    time.Time
	to      time.Time
	corps   []string
	intro   string
}

// statement checks a statement of wallets: a person's own corporation,
// corporationId for anyone else; each wallet of that corporation.
func (f *fakeReports) statement(ctx context.Context, kind string, wallets []string, opts *banking.StatementOptions) (string, error) {
	who, err := f.b.caller(ctx)
	if err != nil {
		return "", err
	}
	corp := opts.CorporationID
	if who.kind == session.Person {
		corp = who.corporationID
	} else if corp == "" {
		return "", bankingRejection(http.StatusBadRequest, banking.CodeRequired, "corporationId", "corporationId is required")
	}
	if err := f.b.walSees(ctx, corp); err != nil {
		return "", err
	}
	f.b.wallets.data.Lock()
	for _, id := range wallets {
		if _, owner := f.b.wallets.find(id); owner != corp {
			f.b.wallets.data.Unlock()
			return "", bankingNotFound()
		}
	}
	f.b.wallets.data.Unlock()
	f.data.Lock()
	defer f.data.Unlock()
	f.asked = append(f.asked, reportAsked{kind: kind, wallets: slices.Clone(wallets), opts: *opts})
	return fmt.Sprintf("https://banking.test/reports/%d.%s", len(f.asked), kind), nil
}

func (f *fakeReports) StatementPDF(ctx context.Context, walletID string, opts *banking.StatementOptions) (string, error) {
	if err := f.enter("StatementPDF"); err != nil {
		return "", err
	}
	return f.statement(ctx, "pdf", []string{walletID}, opts)
}

func (f *fakeReports) StatementCSV(ctx context.Context, walletIDs []string, opts *banking.StatementOptions) (string, error) {
	if err := f.enter("StatementCSV"); err != nil {
		return "", err
	}
	return f.statement(ctx, "csv", walletIDs, opts)
}

// IntroducerFee is for staff and the introducer itself.
func (f *fakeReports) IntroducerFee(ctx context.Context, introducerID string, from, to time.Time, corps []string) (string, error) {
	if err := f.enter("IntroducerFee"); err != nil {
		return "", err
	}
	who, err := f.b.caller(ctx)
	if err != nil {
		return "", err
	}
	if who.kind != session.Staff && (who.kind != session.Introducer || who.id != introducerID) {
		return "", bankingRejection(http.StatusForbidden, 0, "", "the fee report is for staff and the introducer itself")
	}
	f.data.Lock()
	defer f.data.Unlock()
	f.asked = append(f.asked, reportAsked{kind: "fee", intro: introducerID, from: from, to: to, corps: slices.Clone(corps)})
	return fmt.Sprintf("https://banking.test/reports/%d.csv", len(f.asked)), nil
}
