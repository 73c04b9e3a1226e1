package resolvers

import (
	"bytes"
	"slices"
	"sort"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/graph"
	"github.com/fingraph/fingraph/relay"
)

// A person or an API client acts on its own corporation only: every field
// that names a corporation (corporationId, corporationIds) refuses another
// one with FORBIDDEN before any upstream call, through the one check every
// id argument passes (upstreamIDs). corporation(id) answers null, as for a
// corporation the viewer does not see. The table must hold every field of
// the schema with such an argument, so a new one is tested when it is added.
func TestAnotherCorporationIsRefusedBeforeAnyCall(t *testing.T) {
	t.Parallel()
	demo, other := relay.ID(relay.Corporation, demoCorp), relay.ID(relay.Corporation, otherCorp)
	in := func(m map[string]any) map[string]any { return map[string]any{"in": m} }
	file := graphql.Upload{File: bytes.NewReader([]byte("%PDF-1.4")), Filename: "extract.pdf", Size: 8, ContentType: "application/pdf"}
	// Each row names corp; its other fields are valid, so that only the
	// corporation can be what is refused.
	rows := map[string]func(corp string) (query string, vars map[string]any){
		"issueCard": func(corp string) (string, map[string]any) {
			return `mutation($in: IssueCardInput!) { issueCard(input: $in) { id } }`, in(map[string]any{"corporationId": corp,
				"fundingWalletId": "wallet-1", "cardholderId": demoPerson, "cardholderType": "PRIMARY", "expiryMonth": 12, "expiryYear": 2030,
				"type": "VIRTUAL", "brand": "MASTERCARD", "region": "EU", "currency": "EUR"})
		},
		"uploadKycDocument": func(corp string) (string, map[string]any) {
			return `mutation($in: UploadKycDocumentInput!) { uploadKycDocument(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "file": file, "type": "CORPORATE"})
		},
		"updateKycDocument": func(corp string) (string, map[string]any) {
			return `mutation($in: UpdateKycDocumentInput!) { updateKycDocument(input: $in) { id } }`, in(map[string]any{"corporationId": corp, "id": "kyc-1"})
		},
		"deleteKycDocument": func(corp string) (string, map[string]any) {
			return `mutation($in: DeleteKycDocumentInput!) { deleteKycDocument(input: $in) { id } }`, in(map[string]any{"corporationId": corp, "id": "kyc-1"})
		},
		"createPerson": func(corp string) (string, map[string]any) {
			return `mutation($in: CreatePersonInput!) { createPerson(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "firstName": "Ilze", "lastName": "Ozola", "gender": "FEMALE"})
		},
		"updateCorporationSettings": func(corp string) (string, map[string]any) {
			return `mutation($in: UpdateCorporationSettingsInput!) { updateCorporationSettings(input: $in) { allowedPersonTypes } }`,
				in(map[string]any{"corporationId": corp, "allowedPersonTypes": []string{"CONSUMER"}})
		},
		"createApiKey": func(corp string) (string, map[string]any) {
			return `mutation($in: CreateApiKeyInput!) { createApiKey(input: $in) { id } }`, in(map[string]any{"corporationId": corp, "name": "ci"})
		},
		"deleteApiKey": func(corp string) (string, map[string]any) {
			return `mutation($in: DeleteApiKeyInput!) { deleteApiKey(input: $in) }`, in(map[string]any{"corporationId": corp, "id": "key-1"})
		},
		"createWallet": func(corp string) (string, map[string]any) {
			return `mutation($in: CreateWalletInput!) { createWallet(input: $in) { wallets { id } } }`, in(map[string]any{"corporationId": corp, "adapter": "ADAPTER_A"})
		},
		"createWalletRequisites": func(corp string) (string, map[string]any) {
			return `mutation($in: CreateWalletRequisitesInput!) { createWalletRequisites(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "adapter": "ADAPTER_A"})
		},
		"attachWalletRequisites": func(corp string) (string, map[string]any) {
			return `mutation($in: AttachWalletRequisitesInput!) { attachWalletRequisites(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "walletId": "wallet-1"})
		},
		"deleteWalletRequisites": func(corp string) (string, map[string]any) {
			return `mutation($in: DeleteWalletRequisitesInput!) { deleteWalletRequisites(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "id": "rq-1"})
		},
		"updateLimit": func(corp string) (string, map[string]any) {
			return `mutation($in: UpdateLimitInput!) { updateLimit(input: $in) { id } }`,
				in(map[string]any{"corporationId": corp, "id": "limit-1", "limitSet": map[string]any{"dailySuccessfulVelocity": 5}})
		},
		"deleteLimit": func(corp string) (string, map[string]any) {
			return `mutation($in: DeleteLimitInput!) { deleteLimit(input: $in) { id } }`, in(map[string]any{"corporationId": corp, "id": "limit-1"})
		},
		"requestStatement": func(corp string) (string, map[string]any) {
			return `mutation($in: RequestStatementInput!) { requestStatement(input: $in) { url } }`,
				in(map[string]any{"corporationId": corp, "format": "PDF", "walletIds": []string{"wallet-1"}, "from": "2025-01-01", "to": "2025-01-31"})
		},
		"requestIntroducerFeeReport": func(corp string) (string, map[string]any) {
			return `mutation($in: RequestIntroducerFeeReportInput!) { requestIntroducerFeeReport(input: $in) { url } }`,
				in(map[string]any{"corporationIds": []string{corp}, "from": "2025-01-01", "to": "2025-01-31"})
		},
	}

	// Fields of a role these callers lack are refused by @requires first.
	byRole := map[string]bool{"createApiKey": true, "deleteApiKey": true, "createWallet": true,
		"updateLimit": true, "deleteLimit": true, "requestIntroducerFeeReport": true}

	var named []string
	s := graph.NewExecutableSchema(graph.Config{Resolvers: &Resolver{}}).Schema()
	for _, root := range []string{"Query", "Mutation", "Subscription"} {
		for _, f := range s.Types[root].Fields {
			for _, a := range f.Arguments {
				names := []string{a.Name}
				if in := s.Types[a.Type.Name()]; in != nil && in.Kind == "INPUT_OBJECT" {
					for _, fi := range in.Fields {
						names = append(names, fi.Name)
					}
				}
				if slices.Contains(names, "corporationId") || slices.Contains(names, "corporationIds") {
					named = append(named, f.Name)
				}
			}
		}
	}
	var tested []string
	for name := range rows {
		tested = append(tested, name)
	}
	sort.Strings(named)
	sort.Strings(tested)
	require.Equal(t, named, tested, "every field that names a corporation has a row")

	for _, tc := range []struct {
		name string
		who  principal
		corp string
	}{
		{"an API client names another", outsider, demo},
		{"another API client names another", apiClient, other},
		{"a person names another", person, other},
		{"by its upstream id", outsider, demoCorp},
	} {
		for name, row := range rows {
			if name == "requestStatement" && tc.who == person {
				continue // persons' corporationId is ignored: their own corporation's statement
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				h.as(tc.who)
				query, vars := row(tc.corp)
				vars = jsonVars(t, vars)
				if name == "uploadKycDocument" {
					vars["in"].(map[string]any)["file"] = file // as the multipart transport puts it
				}
				resp := h.execRaw(query, vars)
				e := refused(t, resp, "FORBIDDEN", "")
				if !byRole[name] {
					assert.Equal(t, "you act on your own corporation only", e.Message, "refused for its corporation")
				}
				h.noUpstreamCall(t, 0, name)
			})
		}
	}

	// An object under another corporation, named by its global id, is
	// NOT_FOUND, as node answers it, and is not read either.
	for name, q := range map[string]struct {
		query string
		vars  map[string]any
	}{
		"sepaEnabled": {`query($w: ID!) { sepaEnabled(sourceWalletId: $w, iban: "LV80BANK0000435195001") }`,
			map[string]any{"w": relay.ID(relay.Wallet, otherCorp, "wallet-other")}},
		"requestStatement": {`mutation($in: RequestStatementInput!) { requestStatement(input: $in) { url } }`,
			in(map[string]any{"format": "PDF", "walletIds": []string{relay.ID(relay.Wallet, otherCorp, "wallet-other")}})},
	} {
		t.Run("an object of another corporation/"+name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			resp := h.as(person).exec(q.query, q.vars)
			refused(t, resp, "NOT_FOUND", "")
			h.noUpstreamCall(t, 0, name)
		})
	}

	h := newHarness(t)
	var got struct{ Corporation *struct{ Name string } }
	h.as(outsider).exec(`query($id: ID!) { corporation(id: $id) { name } }`, map[string]any{"id": demo}).noErrors(t).decode(t, &got)
	assert.Nil(t, got.Corporation, "another corporation reads as null")
	h.noUpstreamCall(t, 0, "corporation(id) of another")
}
