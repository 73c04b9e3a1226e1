package bankingsim

import (
	"fmt"
	"time"
)

// Demo credentials and ids, the same on every start (DESIGN.md, "Sandbox
// control API and demo data").
const (
	DemoPassword = "demo-password"

	StaffEmail      = "staff@demo.test"
	StaffPhone      = "+37120000001"
	AnnaEmail       = "anna@demo.test"
	TFAEmail        = "tfa@demo.test"
	TFAPhone        = "+37120000002"
	IntroducerEmail = "intro@demo.test"
	IntroducerPhone = "+37120000003"
	BenEmail        = "ben@second.test"
	DemoAPIKey      = "demo-api-key"

	DemoCorporationID   = "c0000000-0000-4000-8000-000000000001"
	DemoAccountID       = "ac000000-0000-4000-8000-000000000001"
	SecondCorporationID = "c0000000-0000-4000-8000-000000000002"
	SecondAccountID     = "ac000000-0000-4000-8000-000000000002"

	StaffID      = "5a000000-0000-4000-8000-000000000001"
	IntroducerID = "1e000000-0000-4000-8000-000000000001"
	DemoAPIKeyID = "ae000000-0000-4000-8000-000000000001"

	AnnaID   = "e0000000-0000-4000-8000-000000000001"
	TFAID    = "e0000000-0000-4000-8000-000000000002"
	DaceID   = "e0000000-0000-4000-8000-000000000003"
	EdgarsID = "e0000000-0000-4000-8000-000000000004"
	BenID    = "e0000000-0000-4000-8000-000000000011"
	KatiID   = "e0000000-0000-4000-8000-000000000012"
	MartID   = "e0000000-0000-4000-8000-000000000013"
)

var seedBase = time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)

func seedID(prefix string, n int) string { return fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, n) }

func strp(s string) *string { return &s }

// Seed loads the demo staff member, introducer, two corporations with their
// persons, and the demo API key. Calling it again restores those records.
func (s *Sim) Seed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	hash := hashPassword(DemoPassword)

	s.staff[StaffID] = &staffMember{ID: StaffID, Email: StaffEmail, FirstName: "Sandra", LastName: "Staff",
		Phone: StaffPhone, Is2FA: true, hash: hash}
	s.introducers[IntroducerID] = &introducer{ID: IntroducerID, Email: IntroducerEmail, FirstName: "Ivo",
		LastName: "Introducer", Phone: IntroducerPhone, hash: hash}
	staffActor := &actor{ID: StaffID, Type: "staff", FullName: "Sandra Staff"}

	onboarded := seedBase.Add(2 * time.Hour)
	s.corporations[DemoCorporationID] = &corporation{ID: DemoCorporationID, AccountID: DemoAccountID,
		IdentityID: seedID("1d000000", 1), Name: "Demo Trading SIA", Email: "office@demo.test",
		Address: "Brivibas iela 1", City: strp("Riga"), Region: strp("Riga"), PostCode: strp("LV-1010"),
		Country: "LV", Currency: "EUR", CreatedAt: seedBase, OnboardedAt: &onboarded, IsOnboarded: true,
		IsKYCVerified: true, IsQuestionnaireFilled: true, IsInitialApplicationFiled: true,
		IsAnotherBankAccount: true, KYCProvider: &kycProvider{ID: AnnaID, FirstName: "Anna", LastName: "Berzina"},
		CreatedBy: staffActor, UpdatedBy: staffActor, IntroducerID: IntroducerID,
		AllowedPersonTypes: []string{TypeEmployee}, SettingsCreatedAt: seedBase, SettingsUpdatedAt: seedBase}
	s.corporations[SecondCorporationID] = &corporation{ID: SecondCorporationID, AccountID: SecondAccountID,
		IdentityID: seedID("1d000000", 2), Name: "Second Ventures OÜ", Email: "office@second.test",
		Address: "Narva mnt 5", City: strp("Tallinn"), Region: strp("Harju"), PostCode: strp("10117"),
		Country: "EE", Currency: "EUR", CreatedAt: seedBase.Add(time.Hour), CreatedBy: staffActor,
		// Mid-onboarding: the application is in, the KYC data is not.
		IsInitialApplicationFiled: true,
		AllowedPersonTypes:        []string{TypeEmployee, TypeConsumer},
		SettingsCreatedAt:         seedBase.Add(time.Hour), SettingsUpdatedAt: seedBase.Add(time.Hour)}

	people := []struct {
		id, corp, first, last, email, phone, typ string
		director, tfa, blocked                   bool
	}{
		{AnnaID, DemoCorporationID, "Anna", "Berzina", AnnaEmail, "+37120000004", TypeEmployee, true, false, false},
		{TFAID, DemoCorporationID, "Toms", "Ozols", TFAEmail, TFAPhone, TypeEmployee, false, true, false},
		{DaceID, DemoCorporationID, "Dace", "Kalnina", "dace@demo.test", "+37120000005", TypeEmployee, false, false, false},
		{EdgarsID, DemoCorporationID, "Edgars", "Liepa", "edgars@demo.test", "+37120000006", TypeEmployee, false, false, true},
		{BenID, SecondCorporationID, "Ben", "Tamm", BenEmail, "+37250000001", TypeEmployee, true, false, false},
		{KatiID, SecondCorporationID, "Kati", "Kask", "kati@second.test", "+37250000002", TypeEmployee, false, false, false},
		{MartID, SecondCorporationID, "Mart", "Saar", "mart@second.test", "+37250000003", TypeConsumer, false, false, false},
	}
	for i, pp := range people {
		created := seedBase.Add(time.Duration(3+i) * time.Hour)
		country := "LV"
		if pp.corp == SecondCorporationID {
			country = "EE"
		}
		p := &person{ID: pp.id, CorpID: pp.corp, FirstName: pp.first, LastName: pp.last, Email: pp.email,
			Phone: pp.phone, Type: pp.typ, IsDirector: pp.director, Is2FA: pp.tfa, Country: country,
			Nationality: country, Gender: "unknown", DateOfBirth: "1990-01-01", ProfileLevel: "basic",
			PrimaryCurrency: "EUR", PersonLoginID: seedID("10000000", i+1), IdentityID: seedID("1d000000", 100+i),
			IsInvitationAccepted: true, CreatedAt: created, UpdatedAt: created, CreatedBy: staffActor,
			UpdatedBy: staffActor, emailUnique: true, hash: hash}
		if pp.director {
			// Directors are fully verified, and their own limits give way
			// to the corporation's.
			p.ProfileLevel, p.IsPersonLimitsDisabled = "advanced", true
		}
		if pp.blocked {
			at := created.Add(time.Hour)
			p.DeletedAt = &at
		}
		s.persons[p.ID] = p
	}
	s.seedScreeningLocked()
	s.apiKeys[DemoAPIKeyID] = &apiKey{ID: DemoAPIKeyID, CorpID: DemoCorporationID, Name: "demo",
		IsActive: true, CreatedAt: seedBase, hash: keyHash(DemoAPIKey)}
	s.seedWalletsLocked()
	s.seedCardsLocked()
}

// seedScreeningLocked gives the demo data the screening results a real
// bank's weekly checks produce: directors sit on boards, one person is a
// politically exposed council member under review, one has a politically
// exposed relative, and the second corporation, not yet onboarded, is under
// review itself.
func (s *Sim) seedScreeningLocked() {
	anna, dace, kati, ben := s.persons[AnnaID], s.persons[DaceID], s.persons[KatiID], s.persons[BenID]
	anna.Screening = screening{BoardMember: true}
	anna.Roles = []string{"role-director"}
	dace.Screening = screening{PoliticallyExposed: true}
	dace.UnderReview = true
	dace.IsPEP = true
	dace.PoliticalInstitution, dace.PositionInPolitical = "Riga City Council", "Council member"
	kati.Screening = screening{RelativeOrCloseAssociate: true}
	ben.Screening = screening{BoardMember: true}
	ben.Roles = []string{"role-director"}

	demo, second := s.corporations[DemoCorporationID], s.corporations[SecondCorporationID]
	demo.UsersScreening = screening{PoliticallyExposed: true, BoardMember: true}
	second.UnderReview = true
	second.UsersScreening = screening{RelativeOrCloseAssociate: true, BoardMember: true}
}
