package bankingsim

import (
	"net/http"

	"github.com/google/uuid"
)

// Bounds of one bulk seeding: enough for the live-events scale run (1,000
// corporations of 10 persons), small enough that one call holds the
// emulator's lock for a fraction of a second.
const (
	MaxBulkCorporations = 10_000
	MaxBulkPersons      = 100
	MaxBulkTotalPersons = 100_000
)

// BulkEmailDomain is the domain of every bulk-seeded person's e-mail.
const BulkEmailDomain = "bulk.test"

// controlBulk creates corporations, each with its persons and one EUR
// wallet, in one call: a measuring tool needs thousands of signed-in
// persons, which the public routes (staff sign-in with SMS, one person at a
// time, invitations) would take minutes to make. Every person is an
// onboarded employee without two-factor whose password is DemoPassword, so
// it signs in through the ordinary person sign-in. With "tokens" each person
// also gets an access token of its own chain, as its sign-in would give.
func (s *Sim) controlBulk(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	corps, cok := b.number(&e, "", "corporations")
	per, pok := b.number(&e, "", "persons")
	tokens, _ := b.boolean(&e, "", "tokens")
	b.unknown(&e, "", "corporations", "persons", "tokens")
	switch {
	case !cok && !hasField(e, "corporations"):
		e.required("corporations")
	case cok && (corps != float64(int(corps)) || corps < 1 || corps > MaxBulkCorporations):
		e.invalid("corporations", "corporations must be a whole number from 1 to "+itoa(MaxBulkCorporations))
	}
	switch {
	case !pok && !hasField(e, "persons"):
		e.required("persons")
	case pok && (per != float64(int(per)) || per < 1 || per > MaxBulkPersons):
		e.invalid("persons", "persons must be a whole number from 1 to "+itoa(MaxBulkPersons))
	}
	if len(e) == 0 && int(corps)*int(per) > MaxBulkTotalPersons {
		e.invalid("persons", "corporations × persons must be at most "+itoa(MaxBulkTotalPersons))
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	// One hash for all: bcrypt per person would cost more than the rest of
	// the call together, and every bulk person has the same password.
	hash := hashPassword(DemoPassword)

	s.mu.Lock()
	now := s.now()
	staffActor := &actor{ID: StaffID, Type: "staff", FullName: "Sandra Staff"}
	out := make([]map[string]any, 0, int(corps))
	for range int(corps) {
		c := &corporation{ID: uuid.NewString(), AccountID: uuid.NewString(), IdentityID: uuid.NewString(),
			Country: "LV", Currency: "EUR", Address: "Brivibas iela 1", CreatedAt: now, OnboardedAt: &now,
			IsOnboarded: true, IsKYCVerified: true, IsQuestionnaireFilled: true, IsInitialApplicationFiled: true,
			CreatedBy: staffActor, AllowedPersonTypes: []string{TypeEmployee}, SettingsCreatedAt: now, SettingsUpdatedAt: now}
		c.Name = "Bulk " + c.ID[:8] + " SIA"
		c.Email = "office-" + c.ID + "@" + BulkEmailDomain
		s.corporations[c.ID] = c
		wl := &wallet{ID: uuid.NewString(), CorpID: c.ID, Name: "Main", Currency: "EUR", Adapter: AdapterA,
			Type: WalletReal, CreatedBy: staffActor, CreatedByLoginID: StaffID, CreatedAt: now, UpdatedAt: now, setUp: true}
		s.wallets[wl.ID] = wl
		persons := make([]map[string]any, 0, int(per))
		for i := range int(per) {
			p := &person{ID: uuid.NewString(), CorpID: c.ID, FirstName: "Bulk", LastName: "Person " + itoa(i+1),
				Type: TypeEmployee, IsDirector: i == 0, Country: "LV", Nationality: "LV", Gender: "unknown",
				DateOfBirth: "1990-01-01", ProfileLevel: "basic", PrimaryCurrency: "EUR", PersonLoginID: uuid.NewString(),
				IdentityID: uuid.NewString(), IsInvitationAccepted: true, CreatedAt: now, UpdatedAt: now,
				CreatedBy: staffActor, UpdatedBy: staffActor, emailUnique: true, hash: hash}
			p.Email = p.ID + "@" + BulkEmailDomain
			s.persons[p.ID] = p
			pj := map[string]any{"id": p.ID, "email": p.Email}
			if tokens {
				pj["token"] = s.issueTokenLocked(principal{kind: kindPerson, id: p.ID, corpID: c.ID}, "")
			}
			persons = append(persons, pj)
		}
		out = append(out, map[string]any{"id": c.ID, "wallet_id": wl.ID, "persons": persons})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"password": DemoPassword, "corporations": out})
}
