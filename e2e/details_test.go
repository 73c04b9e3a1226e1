package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
)

// Tests of what schema/details.graphqls adds, read through the gateway from
// the banking sandbox's seeds over real HTTP: a wallet's bank and history, a
// card's address, a corporation's onboarding progress, who created and
// changed a record, and the back-office fields only staff see.

type actorData struct {
	UpstreamID string `json:"upstreamId"`
	Kind       string `json:"kind"`
	FullName   string `json:"fullName"`
}

type moneyData struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

type walletTxData struct {
	ID                 string     `json:"id"`
	Type               string     `json:"type"`
	Direction          string     `json:"direction"`
	Status             string     `json:"status"`
	StatusCode         *int       `json:"statusCode"`
	Source             *moneyData `json:"source"`
	Target             *moneyData `json:"target"`
	Charge             *moneyData `json:"charge"`
	SourceWalletID     *string    `json:"sourceWalletId"`
	TargetWalletID     *string    `json:"targetWalletId"`
	CreatedBy          *actorData `json:"createdBy"`
	CreatedAt          *string    `json:"createdAt"`
	UpdatedAt          *string    `json:"updatedAt"`
	Score              *float64   `json:"score"`
	ScoreRangeID       *string    `json:"scoreRangeId"`
	ChargeExchangeRate *float64   `json:"chargeExchangeRate"`
}

type walletTxPage struct {
	TotalCount int `json:"totalCount"`
	Edges      []struct {
		Cursor string       `json:"cursor"`
		Node   walletTxData `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage     bool    `json:"hasNextPage"`
		HasPreviousPage bool    `json:"hasPreviousPage"`
		EndCursor       *string `json:"endCursor"`
	} `json:"pageInfo"`
}

const walletTxFields = `totalCount pageInfo { hasNextPage hasPreviousPage endCursor }
  edges { cursor node { id type direction status statusCode source { amount currency } target { amount currency }
    charge { amount currency } sourceWalletId targetWalletId createdBy { upstreamId kind fullName } createdAt updatedAt
    score scoreRangeId chargeExchangeRate } }`

// walletTransactions reads a page of a demo wallet's transactions.
func (g *testGateway) walletTransactions(t *testing.T, walletID string, args string) walletTxPage {
	t.Helper()
	var d struct {
		Corporation struct {
			Wallet struct {
				Transactions walletTxPage `json:"transactions"`
			} `json:"wallet"`
		} `json:"corporation"`
	}
	g.query(t, `query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { transactions`+args+` { `+walletTxFields+` } } } }`,
		map[string]any{"c": demoCorpID, "w": walletID}).decode(t, &d)
	return d.Corporation.Wallet.Transactions
}

func TestScreensShowTheSpecsDetails(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	var d struct {
		CurrentCorporation struct {
			AccountID                  *string    `json:"accountId"`
			IdentityID                 *string    `json:"identityId"`
			IsOnboarded                bool       `json:"isOnboarded"`
			IsInitialApplicationFilled bool       `json:"isInitialApplicationFilled"`
			HasAnotherBankAccount      bool       `json:"hasAnotherBankAccount"`
			KycDataProvidedByID        *string    `json:"kycDataProvidedById"`
			CreatedBy                  *actorData `json:"createdBy"`
			UpdatedBy                  *actorData `json:"updatedBy"`
			KycDataProvider            *struct {
				UpstreamID string `json:"upstreamId"`
				FirstName  string `json:"firstName"`
				LastName   string `json:"lastName"`
			} `json:"kycDataProvider"`
			Wallets []struct {
				UpstreamID  string `json:"upstreamId"`
				BankAddress *struct {
					Name, Street, PostCode, City, Country string
				} `json:"bankAddress"`
				UpdatedAt        *string    `json:"updatedAt"`
				CreatedBy        *actorData `json:"createdBy"`
				CreatedByLoginID *string    `json:"createdByLoginId"`
			} `json:"wallets"`
			WalletRequisites []struct {
				UpdatedAt *string `json:"updatedAt"`
			} `json:"walletRequisites"`
			KycDocuments []struct {
				UpstreamID       string     `json:"upstreamId"`
				CreatedBy        *actorData `json:"createdBy"`
				UpdatedBy        *actorData `json:"updatedBy"`
				CreatedByLoginID *string    `json:"createdByLoginId"`
				UpdatedByLoginID *string    `json:"updatedByLoginId"`
			} `json:"kycDocuments"`
			Invoices []struct {
				UpdatedAt *string `json:"updatedAt"`
			} `json:"invoices"`
			Limits []struct {
				CreatedAt *string `json:"createdAt"`
			} `json:"limits"`
			Settings *struct {
				CreatedAt *string `json:"createdAt"`
			} `json:"settings"`
			Cards []struct {
				UpstreamID string `json:"upstreamId"`
				Address    *struct {
					Street   string  `json:"street"`
					City     string  `json:"city"`
					Region   *string `json:"region"`
					PostCode string  `json:"postCode"`
					Country  string  `json:"country"`
				} `json:"address"`
				EmbossedCompanyName *string `json:"embossedCompanyName"`
				IssuerCardholderID  *string `json:"issuerCardholderId"`
			} `json:"cards"`
		} `json:"currentCorporation"`
	}
	anna.query(t, `{ currentCorporation {
	  accountId identityId isOnboarded isInitialApplicationFilled hasAnotherBankAccount kycDataProvidedById
	  kycDataProvider { upstreamId firstName lastName } createdBy { upstreamId kind fullName } updatedBy { upstreamId kind fullName }
	  wallets { upstreamId bankAddress { name street postCode city country } updatedAt createdBy { upstreamId kind fullName } createdByLoginId }
	  walletRequisites { updatedAt }
	  kycDocuments { upstreamId createdBy { upstreamId kind fullName } updatedBy { upstreamId kind fullName } createdByLoginId updatedByLoginId }
	  invoices { updatedAt } limits { createdAt } settings { createdAt }
	  cards { upstreamId address { street city region postCode country } embossedCompanyName issuerCardholderId }
	} }`, nil).decode(t, &d)
	c := d.CurrentCorporation

	// Onboarding progress, as the seed has it: all done, Anna gave the KYC data.
	if c.AccountID == nil || *c.AccountID != bankingsim.DemoAccountID || c.IdentityID == nil || *c.IdentityID == "" {
		t.Errorf("accountId %v identityId %v", c.AccountID, c.IdentityID)
	}
	if !c.IsOnboarded || !c.IsInitialApplicationFilled || !c.HasAnotherBankAccount {
		t.Errorf("onboarding progress: onboarded %v application %v another bank account %v", c.IsOnboarded, c.IsInitialApplicationFilled, c.HasAnotherBankAccount)
	}
	if c.KycDataProvidedByID == nil || *c.KycDataProvidedByID != annaID || c.KycDataProvider == nil ||
		c.KycDataProvider.UpstreamID != annaID || c.KycDataProvider.FirstName != "Anna" || c.KycDataProvider.LastName != "Berzina" {
		t.Errorf("KYC data provider: %v %+v", c.KycDataProvidedByID, c.KycDataProvider)
	}
	staffActor := actorData{UpstreamID: bankingsim.StaffID, Kind: "STAFF", FullName: "Sandra Staff"}
	if c.CreatedBy == nil || *c.CreatedBy != staffActor || c.UpdatedBy == nil || *c.UpdatedBy != staffActor {
		t.Errorf("corporation createdBy %+v updatedBy %+v", c.CreatedBy, c.UpdatedBy)
	}

	// Every wallet names its bank beside its IBAN; the card wallet is on adapter A.
	found := false
	for _, w := range c.Wallets {
		if w.BankAddress == nil || w.BankAddress.Name == "" || w.BankAddress.Country == "" || w.UpdatedAt == nil ||
			w.CreatedBy == nil || w.CreatedBy.Kind != "STAFF" || w.CreatedByLoginID == nil {
			t.Errorf("wallet %s: bank %+v updatedAt %v createdBy %+v login %v", w.UpstreamID, w.BankAddress, w.UpdatedAt, w.CreatedBy, w.CreatedByLoginID)
		}
		if w.UpstreamID == demoCardWalletID {
			found = true
			if b := w.BankAddress; b == nil || b.Name != "Sandbox Bank A" || b.Street != "Elizabetes iela 1" || b.PostCode != "LV-1010" || b.City != "Riga" || b.Country != "LV" {
				t.Errorf("card wallet's bank: %+v", b)
			}
		}
	}
	if !found {
		t.Fatalf("the card wallet is not among %d wallets", len(c.Wallets))
	}
	if len(c.WalletRequisites) == 0 {
		t.Error("no requisites")
	}
	for _, q := range c.WalletRequisites {
		if q.UpdatedAt == nil {
			t.Error("requisites without updatedAt")
		}
	}

	// Who uploaded the KYC document, and who verified it.
	if len(c.KycDocuments) == 0 {
		t.Fatal("no KYC document")
	}
	doc := c.KycDocuments[0]
	if doc.CreatedBy == nil || *doc.CreatedBy != (actorData{UpstreamID: annaID, Kind: "PERSON", FullName: "Anna Berzina"}) ||
		doc.UpdatedBy == nil || *doc.UpdatedBy != staffActor ||
		doc.CreatedByLoginID == nil || *doc.CreatedByLoginID == "" || doc.UpdatedByLoginID == nil || *doc.UpdatedByLoginID != bankingsim.StaffID {
		t.Errorf("KYC document %s: createdBy %+v updatedBy %+v logins %v %v", doc.UpstreamID, doc.CreatedBy, doc.UpdatedBy, doc.CreatedByLoginID, doc.UpdatedByLoginID)
	}

	// When: invoices, limits, settings.
	if len(c.Invoices) == 0 || c.Invoices[0].UpdatedAt == nil || len(c.Limits) == 0 || c.Limits[0].CreatedAt == nil ||
		c.Settings == nil || c.Settings.CreatedAt == nil {
		t.Errorf("invoices %+v limits %+v settings %+v", c.Invoices, c.Limits, c.Settings)
	}

	// A card's address, as issued.
	if len(c.Cards) == 0 {
		t.Fatal("no card")
	}
	for _, card := range c.Cards {
		a := card.Address
		if a == nil || a.Street != "Brivibas iela 1" || a.City != "Riga" || a.PostCode != "LV-1010" || a.Country != "LV" || a.Region == nil || *a.Region != "Riga" {
			t.Errorf("card %s address: %+v", card.UpstreamID, a)
		}
		if card.EmbossedCompanyName == nil || *card.EmbossedCompanyName != "Demo Trading SIA" || card.IssuerCardholderID == nil || *card.IssuerCardholderID == "" {
			t.Errorf("card %s: company %v issuer cardholder %v", card.UpstreamID, card.EmbossedCompanyName, card.IssuerCardholderID)
		}
	}
}

// TestWalletTransactionsPageTheWalletsHistory pages a wallet's transactions
// through the graph, sees a new conversion first, and shows the scoring
// fields to staff only.
func TestWalletTransactionsPageTheWalletsHistory(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.as(g.signInStaff(t))

	before := anna.walletTransactions(t, demoUSDWalletID, "")
	// The seeded history: a payment in, a payment out, and the seeded
	// conversion to EUR, newest first.
	var types []string
	for _, e := range before.Edges {
		types = append(types, e.Node.Type+"/"+e.Node.Direction)
	}
	if before.TotalCount != 3 || len(before.Edges) != 3 || strings.Join(types, ",") != "convert/OUTGOING,transfer-outgoing/OUTGOING,transfer-incoming/INCOMING" {
		t.Fatalf("seeded USD history: %d %v", before.TotalCount, types)
	}
	if in := before.Edges[2].Node; in.Source != nil || in.SourceWalletID != nil || in.Target == nil || *in.Target != (moneyData{650000, "USD"}) || in.Status != "APPROVED" {
		t.Errorf("seeded incoming payment: %+v", in)
	}
	if out := before.Edges[1].Node; out.Source == nil || *out.Source != (moneyData{150000, "USD"}) || out.TargetWalletID != nil ||
		out.CreatedBy == nil || out.CreatedBy.UpstreamID != annaID {
		t.Errorf("seeded outgoing payment: %+v", out)
	}
	res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 10000, "currency": "EUR"})
	if len(r.Errors) > 0 || res.Typename != "Conversion" {
		t.Fatalf("conversion: %+v %+v", res, r.Errors)
	}
	after := anna.walletTransactions(t, demoUSDWalletID, "")
	if after.TotalCount != before.TotalCount+1 || len(after.Edges) == 0 {
		t.Fatalf("totalCount %d then %d, %d edges", before.TotalCount, after.TotalCount, len(after.Edges))
	}
	first := after.Edges[0].Node
	if first.ID != res.ID || first.Type != "convert" || first.Direction != "OUTGOING" || first.Status != "PENDING" ||
		first.StatusCode == nil || *first.StatusCode != 40 || first.Source == nil || *first.Source != (moneyData{10854, "USD"}) ||
		first.Target == nil || *first.Target != (moneyData{10000, "EUR"}) || first.Charge == nil || *first.Charge != (moneyData{54, "USD"}) ||
		first.SourceWalletID == nil || rawID(*first.SourceWalletID) != demoUSDWalletID ||
		first.TargetWalletID == nil || rawID(*first.TargetWalletID) != demoEURWalletID ||
		first.CreatedBy == nil || first.CreatedBy.UpstreamID != annaID || first.CreatedAt == nil || first.UpdatedAt == nil {
		t.Errorf("newest transaction = %+v, want the conversion %s", first, res.ID)
	}
	// A person does not see the bank's scoring of it.
	if first.Score != nil || first.ScoreRangeID != nil || first.ChargeExchangeRate != nil {
		t.Errorf("a person sees score %v range %v charge rate %v", first.Score, first.ScoreRangeID, first.ChargeExchangeRate)
	}
	// The target wallet lists it as incoming.
	if in := anna.walletTransactions(t, demoEURWalletID, "(first: 1)"); len(in.Edges) != 1 || in.Edges[0].Node.ID != res.ID || in.Edges[0].Node.Direction != "INCOMING" {
		t.Errorf("target wallet's newest = %+v", in.Edges)
	}

	// Staff see the scoring: 100.00 EUR scores 99 in the sandbox, low risk.
	sf := staff.walletTransactions(t, demoUSDWalletID, "(first: 1)").Edges
	if len(sf) != 1 || sf[0].Node.ID != res.ID || sf[0].Node.Score == nil || *sf[0].Node.Score != 99 ||
		sf[0].Node.ScoreRangeID == nil || *sf[0].Node.ScoreRangeID != "score-range-low-risk" || sf[0].Node.ChargeExchangeRate == nil {
		t.Errorf("staff view = %+v", sf)
	}

	// Paging one at a time walks the whole history, newest first, without repeats.
	seen := map[string]bool{}
	args := "(first: 1)"
	for page := 0; ; page++ {
		p := anna.walletTransactions(t, demoUSDWalletID, args)
		if len(p.Edges) != 1 || p.PageInfo.HasPreviousPage != (page > 0) {
			t.Fatalf("page %d: %d edges, hasPreviousPage %v", page, len(p.Edges), p.PageInfo.HasPreviousPage)
		}
		if id := p.Edges[0].Node.ID; seen[id] {
			t.Fatalf("page %d repeats %s", page, id)
		} else {
			seen[id] = true
		}
		if !p.PageInfo.HasNextPage {
			break
		}
		if page > after.TotalCount {
			t.Fatal("paging does not end")
		}
		args = `(first: 1, after: "` + *p.PageInfo.EndCursor + `")`
	}
	if len(seen) != after.TotalCount {
		t.Errorf("paged %d transactions, totalCount %d", len(seen), after.TotalCount)
	}
	// A cursor of one wallet is refused by another: resolvers'
	// TestWalletTransactionsRefuseForeignCursors.
}

// TestWalletTransactionsWithoutTheListingAreATypedError: the strict sandbox
// serves only what the spec shows, which lists no wallet transactions; the
// field answers UPSTREAM_UNAVAILABLE with reason NOT_OFFERED, never an empty
// page, and the rest of the wallet still reads.
func TestWalletTransactionsWithoutTheListingAreATypedError(t *testing.T) {
	t.Parallel()
	g := startGateway(t, "-sandbox-strict", "true")
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	r := anna.query(t, `query($c: ID!, $w: ID!) { corporation(id: $c) { wallet(id: $w) { name bankAddress { name } transactions { totalCount edges { node { id } } } } } }`,
		map[string]any{"c": demoCorpID, "w": demoUSDWalletID})
	if len(r.Errors) != 1 || r.code() != "UPSTREAM_UNAVAILABLE" || r.Errors[0].Extensions["reason"] != "NOT_OFFERED" {
		t.Fatalf("errors = %+v", r.Errors)
	}
	var d struct {
		Corporation struct {
			Wallet struct {
				Name        string `json:"name"`
				BankAddress *struct {
					Name string `json:"name"`
				} `json:"bankAddress"`
				Transactions json.RawMessage `json:"transactions"`
			} `json:"wallet"`
		} `json:"corporation"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatal(err)
	}
	w := d.Corporation.Wallet
	if w.Name == "" || w.BankAddress == nil || w.BankAddress.Name == "" || string(w.Transactions) != "null" {
		t.Errorf("wallet = %+v transactions %s", w, w.Transactions)
	}
}

// TestBackOfficeFieldsAreForStaff: a person's profile level, primary
// currency and limits switch are shown to staff, and null to the person
// themselves and to colleagues, with who created and changed the person
// shown to all who see the person.
func TestBackOfficeFieldsAreForStaff(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	q := `query($id: ID!) { person(id: $id) { profileLevel primaryCurrency isPersonLimitsDisabled createdBy { upstreamId kind fullName } updatedBy { kind } } }`
	type personData struct {
		Person struct {
			ProfileLevel           *string    `json:"profileLevel"`
			PrimaryCurrency        *string    `json:"primaryCurrency"`
			IsPersonLimitsDisabled *bool      `json:"isPersonLimitsDisabled"`
			CreatedBy              *actorData `json:"createdBy"`
			UpdatedBy              *actorData `json:"updatedBy"`
		} `json:"person"`
	}
	read := func(token, id string) personData {
		var d personData
		g.queryAs(t, token, q, map[string]any{"id": id}).decode(t, &d)
		if d.Person.CreatedBy == nil || d.Person.CreatedBy.Kind != "STAFF" || d.Person.CreatedBy.FullName != "Sandra Staff" || d.Person.UpdatedBy == nil {
			t.Errorf("person %s createdBy %+v updatedBy %+v", id, d.Person.CreatedBy, d.Person.UpdatedBy)
		}
		return d
	}
	staff := read(g.signInStaff(t), annaID).Person
	if staff.ProfileLevel == nil || *staff.ProfileLevel != "advanced" || staff.PrimaryCurrency == nil || *staff.PrimaryCurrency != "EUR" ||
		staff.IsPersonLimitsDisabled == nil || !*staff.IsPersonLimitsDisabled {
		t.Errorf("staff view of Anna: %v %v %v", staff.ProfileLevel, staff.PrimaryCurrency, staff.IsPersonLimitsDisabled)
	}
	dace := read(g.signInStaff(t), daceID).Person
	if dace.ProfileLevel == nil || *dace.ProfileLevel != "basic" || dace.IsPersonLimitsDisabled == nil || *dace.IsPersonLimitsDisabled {
		t.Errorf("staff view of Dace: %v %v", dace.ProfileLevel, dace.IsPersonLimitsDisabled)
	}
	// The listing's items carry a subset without these: null, never a
	// made-up false.
	var list struct {
		Persons struct {
			Edges []struct {
				Node struct {
					ProfileLevel           *string `json:"profileLevel"`
					IsPersonLimitsDisabled *bool   `json:"isPersonLimitsDisabled"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"persons"`
	}
	g.queryAs(t, g.signInStaff(t), `{ persons(first: 20) { edges { node { profileLevel isPersonLimitsDisabled } } } }`, nil).decode(t, &list)
	if len(list.Persons.Edges) == 0 {
		t.Fatal("staff list no persons")
	}
	for _, e := range list.Persons.Edges {
		if e.Node.ProfileLevel != nil || e.Node.IsPersonLimitsDisabled != nil {
			t.Errorf("a listed person shows %v %v, which the listing does not carry", e.Node.ProfileLevel, e.Node.IsPersonLimitsDisabled)
		}
	}
	// Anyone but staff reads them as null: resolvers'
	// TestPersonBackOfficeFieldsAreStaffOnly.
}

// TestLiveWalletTransactionsFollowAConversion: a live query of a wallet's
// transactions answers again, with the new conversion first, when the
// gateway's own conversion changes the wallet (its announcement names the
// Wallet, which the answer watches).
func TestLiveWalletTransactionsFollowAConversion(t *testing.T) {
	g := startGateway(t, livePollArgs...)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	ws := anna.dialWS(t, nil, nil)
	ws.subscribe("1", `query($c: ID!, $w: ID!) @live { corporation(id: $c) { wallet(id: $w) { id transactions(first: 1) { totalCount edges { node { id type direction } } } } } }`,
		map[string]any{"c": demoCorpID, "w": demoUSDWalletID})
	type live struct {
		Corporation struct {
			Wallet struct {
				Transactions walletTxPage `json:"transactions"`
			} `json:"wallet"`
		} `json:"corporation"`
	}
	var first, next live
	ws.answer("1", 30*time.Second, &first)
	res, r := anna.convert(t, map[string]any{"sourceWalletId": demoUSDWalletID, "amount": 5000, "currency": "EUR"})
	if len(r.Errors) > 0 || res.Typename != "Conversion" {
		t.Fatalf("conversion: %+v %+v", res, r.Errors)
	}
	ws.answer("1", liveWait, &next)
	tx := next.Corporation.Wallet.Transactions
	if tx.TotalCount != first.Corporation.Wallet.Transactions.TotalCount+1 || len(tx.Edges) != 1 || tx.Edges[0].Node.ID != res.ID || tx.Edges[0].Node.Direction != "OUTGOING" {
		t.Errorf("live answer after the conversion: %+v, want %s first", tx, res.ID)
	}
}

// TestKycDocumentSaysWhoUploadedAndWhoVerified: a document Anna uploads
// names her as its creator and last changer; once staff verify it, staff
// is its last changer, and Anna stays its creator.
func TestKycDocumentSaysWhoUploadedAndWhoVerified(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	staff := g.as(g.signInStaff(t))
	type doc struct {
		ID               string     `json:"id"`
		Status           string     `json:"status"`
		CreatedBy        *actorData `json:"createdBy"`
		UpdatedBy        *actorData `json:"updatedBy"`
		CreatedByLoginID *string    `json:"createdByLoginId"`
		UpdatedByLoginID *string    `json:"updatedByLoginId"`
	}
	const fields = `id status createdBy { upstreamId kind fullName } updatedBy { upstreamId kind fullName } createdByLoginId updatedByLoginId`
	var up struct {
		Doc doc `json:"uploadKycDocument"`
	}
	r, _ := anna.upload(t, nil, `mutation($input: UploadKycDocumentInput!) { uploadKycDocument(input: $input) { `+fields+` } }`,
		map[string]any{"input": map[string]any{"file": nil}}, "variables.input.file", "articles.pdf", []byte("%PDF-1.7\n%%EOF\n"))
	r.decode(t, &up)
	annaActor := actorData{UpstreamID: annaID, Kind: "PERSON", FullName: "Anna Berzina"}
	if d := up.Doc; d.CreatedBy == nil || *d.CreatedBy != annaActor || d.UpdatedBy == nil || *d.UpdatedBy != annaActor ||
		d.CreatedByLoginID == nil || d.UpdatedByLoginID == nil || *d.CreatedByLoginID != *d.UpdatedByLoginID {
		t.Fatalf("uploaded: %+v", d)
	}
	var u struct {
		Doc doc `json:"updateKycDocument"`
	}
	staff.query(t, `mutation($input: UpdateKycDocumentInput!) { updateKycDocument(input: $input) { `+fields+` } }`,
		map[string]any{"input": map[string]any{"id": up.Doc.ID, "corporationId": bankingsim.DemoCorporationID, "status": "VERIFIED"}}).decode(t, &u)
	if d := u.Doc; d.Status != "VERIFIED" || d.CreatedBy == nil || *d.CreatedBy != annaActor ||
		d.UpdatedBy == nil || d.UpdatedBy.Kind != "STAFF" || d.UpdatedBy.UpstreamID != bankingsim.StaffID ||
		d.UpdatedByLoginID == nil || *d.UpdatedByLoginID == *up.Doc.CreatedByLoginID {
		t.Errorf("verified: %+v createdBy %+v updatedBy %+v", d, d.CreatedBy, d.UpdatedBy)
	}
}

// TestWalletTransactionsAreReadOncePerWalletAndPage: a wallet's page asked
// for twice in one operation (on two paths) is one upstream read; another
// page size is another.
func TestWalletTransactionsAreReadOncePerWalletAndPage(t *testing.T) {
	t.Parallel()
	g := startGateway(t)
	anna := g.as(g.signInPerson(t, "anna@demo.test"))
	const page = `transactions(first: 2) { edges { node { id } } }`
	g.resetStats(t)
	anna.query(t, `query($c: ID!, $w: ID!) {
	  corporation(id: $c) { wallet(id: $w) { `+page+` again: `+page+` other: transactions(first: 3) { totalCount } } }
	  currentCorporation { wallets { id `+page+` } }
	}`, map[string]any{"c": demoCorpID, "w": demoUSDWalletID}).decode(t, &map[string]any{})
	s := g.stats(t)
	// Four demo wallets: each one's first 2 once (the USD wallet's asked
	// for three times), and the USD wallet's first 3 once.
	if n := s.Routes[routeWalletTransactions]; n != 5 {
		t.Errorf("wallet transaction reads = %d, want 5 (4 wallets' first 2, the USD wallet's first 3); routes %v", n, s.Routes)
	}
	if n := s.Routes[routeWallets]; n != 1 {
		t.Errorf("wallet listings = %d, want 1", n)
	}
}
