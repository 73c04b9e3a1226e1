package resolvers

import (
	"testing"

	"github.com/fingraph/fingraph/relay"
)

// Who may call each identity and KYC field: the schema's @requires role and
// the resolvers' own refusals (introducers manage no persons, only persons
// have a profile, persons and API clients act on their own corporation).
// The gateway refuses before any upstream call, another corporation named
// by a person or an API client included; where only the upstream can tell
// (an introducer's corporations), its refusal reaches the client with the
// upstream's meaning and nothing changes.
func TestWhoMayCallTheIdentityFields(t *testing.T) {
	t.Parallel()
	demo, other := relay.ID(relay.Corporation, demoCorp), relay.ID(relay.Corporation, otherCorp)
	anna := relay.ID(relay.Person, demoPerson)
	const (
		person1        = `query($id: ID!) { person(id: $id) { firstName } }`
		corporation1   = `query($id: ID!) { corporation(id: $id) { name } }`
		corporations   = `{ corporations { totalCount } }`
		current        = `{ currentCorporation { name } }`
		createPerson   = `mutation($in: CreatePersonInput!) { createPerson(input: $in) { id } }`
		updatePerson   = `mutation($in: UpdatePersonInput!) { updatePerson(input: $in) { id } }`
		blockPerson    = `mutation($in: PersonIdInput!) { blockPerson(input: $in) { id } }`
		restorePerson  = `mutation($in: PersonIdInput!) { restorePerson(input: $in) { id } }`
		updateMe       = `mutation($in: UpdateMeInput!) { updateMe(input: $in) { id } }`
		changeMyPhone  = `mutation($in: ChangeMyPhoneInput!) { changeMyPhone(input: $in) { __typename } }`
		updateCorp     = `mutation($in: UpdateCorporationInput!) { updateCorporation(input: $in) { id } }`
		updateSettings = `mutation($in: UpdateCorporationSettingsInput!) { updateCorporationSettings(input: $in) { allowedPersonTypes } }`
		createKey      = `mutation($in: CreateApiKeyInput!) { createApiKey(input: $in) { id } }`
		apiKeys        = `{ corporations { edges { node { apiKeys { id } } } } }`
		screening      = `{ corporations { edges { node { overallScreeningInfo { underReview } } } } }`
		updateKYC      = `mutation($in: UpdateKycDocumentInput!) { updateKycDocument(input: $in) { id } }`
		deleteKYC      = `mutation($in: DeleteKycDocumentInput!) { deleteKycDocument(input: $in) { id } }`
	)
	in := func(m map[string]any) map[string]any { return map[string]any{"in": m} }
	newPerson := in(map[string]any{"firstName": "Ilze", "lastName": "Ozola", "email": "ilze@demo.test", "gender": "FEMALE"})
	annaID := map[string]any{"id": anna}
	kyc := in(map[string]any{"id": "kyc-1"})

	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		who   principal
		// want is the error code, "" when the call is allowed.
		want string
		// upstream is whether the refusal is the upstream's, after its
		// call; the gateway's own refusals cost none.
		upstream bool
	}{
		{"person/staff", person1, annaID, staff, "", false},
		{"person/customer", person1, annaID, customer, "FORBIDDEN", false},
		{"person/anonymous", person1, annaID, anonymous, "UNAUTHENTICATED", false},
		{"person/introducer, refused by the upstream", person1, annaID, introducer, "FORBIDDEN", true},
		{"corporation/person", corporation1, map[string]any{"id": demo}, person, "", false},
		{"corporation/customer", corporation1, map[string]any{"id": demo}, customer, "FORBIDDEN", false},
		{"corporations/introducer", corporations, nil, introducer, "", false},
		{"corporations/anonymous", corporations, nil, anonymous, "UNAUTHENTICATED", false},
		{"currentCorporation/API client", current, nil, apiClient, "", false},
		{"currentCorporation/customer", current, nil, customer, "FORBIDDEN", false},

		{"createPerson/person", createPerson, newPerson, person, "", false},
		{"createPerson/introducer", createPerson, newPerson, introducer, "FORBIDDEN", false},
		{"createPerson/customer", createPerson, newPerson, customer, "FORBIDDEN", false},
		{"updatePerson/introducer", updatePerson, in(map[string]any{"id": anna, "firstName": "A"}), introducer, "FORBIDDEN", false},
		{"updatePerson/anonymous", updatePerson, in(map[string]any{"id": anna, "firstName": "A"}), anonymous, "UNAUTHENTICATED", false},
		{"blockPerson/introducer", blockPerson, in(annaID), introducer, "FORBIDDEN", false},
		{"blockPerson/outsider, refused by the upstream", blockPerson, in(annaID), outsider, "NOT_FOUND", true},
		{"restorePerson/introducer", restorePerson, in(annaID), introducer, "FORBIDDEN", false},
		{"restorePerson/customer", restorePerson, in(annaID), customer, "FORBIDDEN", false},
		{"updateMe/person", updateMe, in(map[string]any{"otherPhone": "+37120000000"}), person, "", false},
		{"updateMe/staff", updateMe, in(map[string]any{"otherPhone": "+37120000000"}), staff, "FORBIDDEN", false},
		{"updateMe/API client", updateMe, in(map[string]any{"otherPhone": "+37120000000"}), apiClient, "FORBIDDEN", false},
		{"changeMyPhone/introducer", changeMyPhone, in(map[string]any{"phone": "+37120000000", "currentPassword": demoPassword}), introducer, "FORBIDDEN", false},
		{"changeMyPhone/anonymous", changeMyPhone, in(map[string]any{"phone": "+37120000000", "currentPassword": demoPassword}), anonymous, "UNAUTHENTICATED", false},

		{"updateCorporation/staff", updateCorp, in(map[string]any{"id": other, "name": "Renamed"}), staff, "", false},
		{"updateCorporation/person", updateCorp, in(map[string]any{"id": demo, "name": "Mine"}), person, "FORBIDDEN", false},
		{"updateCorporation/API client", updateCorp, in(map[string]any{"id": demo, "name": "Mine"}), apiClient, "FORBIDDEN", false},
		{"updateCorporationSettings/own", updateSettings, in(map[string]any{"corporationId": demo, "allowedPersonTypes": []string{"CONSUMER"}}), apiClient, "", false},
		{"updateCorporationSettings/another corporation's", updateSettings, in(map[string]any{"corporationId": demo, "allowedPersonTypes": []string{"CONSUMER"}}), outsider, "FORBIDDEN", false},
		{"updateCorporationSettings/customer", updateSettings, in(map[string]any{"corporationId": demo, "allowedPersonTypes": []string{}}), customer, "FORBIDDEN", false},
		{"createApiKey/staff", createKey, in(map[string]any{"corporationId": demo, "name": "ci"}), staff, "", false},
		{"createApiKey/person", createKey, in(map[string]any{"corporationId": demo, "name": "ci"}), person, "FORBIDDEN", false},
		{"createApiKey/API client", createKey, in(map[string]any{"corporationId": demo, "name": "ci"}), apiClient, "FORBIDDEN", false},
		{"createApiKey/introducer", createKey, in(map[string]any{"corporationId": demo, "name": "ci"}), introducer, "FORBIDDEN", false},
		{"Corporation.apiKeys/person", apiKeys, nil, person, "FORBIDDEN", true},
		{"Corporation.apiKeys/person's own", `{ currentCorporation { apiKeys { id } } }`, nil, person, "FORBIDDEN", true},
		{"Corporation.overallScreeningInfo/API client", screening, nil, apiClient, "FORBIDDEN", true},

		{"updateKycDocument/introducer", updateKYC, kyc, introducer, "FORBIDDEN", false},
		{"updateKycDocument/another corporation's", updateKYC, in(map[string]any{"id": "kyc-1", "corporationId": other}), person, "FORBIDDEN", false},
		{"updateKycDocument/staff without the corporation", updateKYC, kyc, staff, "BAD_USER_INPUT", false},
		{"deleteKycDocument/customer", deleteKYC, kyc, customer, "FORBIDDEN", false},
		{"deleteKycDocument/another corporation's", deleteKYC, in(map[string]any{"id": "kyc-1", "corporationId": other}), apiClient, "FORBIDDEN", false},
		{"deleteKycDocument/introducer", deleteKYC, kyc, introducer, "FORBIDDEN", false},
		{"deleteKycDocument/staff without the corporation", deleteKYC, kyc, staff, "BAD_USER_INPUT", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			resp := h.as(tc.who).exec(tc.query, tc.vars)
			if tc.want == "" {
				resp.noErrors(t)
				if h.upstreamCalls() == 0 {
					t.Fatal("an allowed call reached no upstream")
				}
				return
			}
			// A field's refusal nulls what holds it; the error is the
			// field's.
			if got := resp.Errors; len(got) == 0 || got[0].Code() != tc.want {
				t.Fatalf("got %s, want %s", resp, tc.want)
			}
			if n := h.upstreamCalls(); !tc.upstream && n != 0 {
				t.Fatalf("a refused call made %d upstream calls, want none", n)
			}
		})
	}
}

// An id of another node type is no id of the field's type: NOT_FOUND
// before any upstream call, whoever asks.
func TestIdentityFieldsRefuseIdsOfOtherTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	wallet := relay.ID(relay.Wallet, demoCorp, demoWalletEUR)
	for _, tc := range []struct {
		query string
		vars  map[string]any
	}{
		{`query($id: ID!) { person(id: $id) { id } }`, map[string]any{"id": relay.ID(relay.Corporation, demoCorp)}},
		{`query($id: ID!) { corporation(id: $id) { id } }`, map[string]any{"id": relay.ID(relay.Person, demoPerson)}},
		{`mutation($id: ID!) { blockPerson(input: {id: $id}) { id } }`, map[string]any{"id": wallet}},
		{`mutation($id: ID!) { updatePerson(input: {id: $id, firstName: "X"}) { id } }`, map[string]any{"id": wallet}},
		{`mutation($id: ID!) { updateCorporation(input: {id: $id, name: "X"}) { id } }`, map[string]any{"id": wallet}},
		{`mutation($id: ID!) { deleteApiKey(input: {corporationId: $id, id: "key-1"}) }`, map[string]any{"id": wallet}},
		{`mutation($id: ID!) { deleteKycDocument(input: {corporationId: $id, id: "kyc-1"}) { id } }`, map[string]any{"id": wallet}},
		// A document's id names its corporation: another than the input's is none of it.
		{`mutation($id: ID!, $corp: ID!) { updateKycDocument(input: {id: $id, corporationId: $corp}) { id } }`,
			map[string]any{"id": relay.ID(relay.KycDocument, otherCorp, "kyc-1"), "corp": relay.ID(relay.Corporation, demoCorp)}},
	} {
		before := h.upstreamCalls()
		refused(t, h.as(staff).exec(tc.query, tc.vars), "NOT_FOUND", "")
		h.noUpstreamCall(t, before, tc.query)
	}
}
