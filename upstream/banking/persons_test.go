package banking

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fingraph/fingraph/upstream/roundtrip"
)

const personJSON = `{"id":"p1","first_name":"Anna","last_name":"Berg","phone":"+4512345678",
"created_at":"2019-08-08T10:00:00.000Z","updated_at":"","deleted_at":null,"is_blocked":false,
"score_adjustment":-5,"longitude":null,"ownership":25,"is_2_fa_enabled":true,
"account":{"id":"acc1","corporation_id":"c1"},"roles":["r1"],
"screening_info":{"is_person_under_review":false,"person_profile":{"politically_exposed":true}},
"permissions":{"persons_management.read":true,"cards.write":false},"type":"employee"}`

func TestPersonsGetDecodesSpecFields(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(personJSON))
	})
	p, err := c.Persons.Me(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "/banking/v2/persons/me", f.last(t).Path)
	assert.Equal(t, "p1", p.ID)
	assert.Equal(t, 2019, p.CreatedAt.Year())
	assert.True(t, p.UpdatedAt.IsZero(), "an empty timestamp decodes as zero")
	assert.Nil(t, p.DeletedAt)
	require.NotNil(t, p.ScoreAdjustment)
	assert.EqualValues(t, -5, *p.ScoreAdjustment)
	require.NotNil(t, p.Is2FAEnabled)
	assert.True(t, *p.Is2FAEnabled)
	assert.Equal(t, map[string]bool{"persons_management.read": true, "cards.write": false}, p.Permissions)
	assert.JSONEq(t, `{"id":"acc1","corporation_id":"c1"}`, string(p.Account.Raw))
	assert.Equal(t, "c1", p.Account.Corporation())
	require.NotNil(t, p.ScreeningInfo)
	assert.True(t, p.ScreeningInfo.PersonProfile.PoliticallyExposed)

	_, err = c.Persons.Get(t.Context(), "a/b")
	require.NoError(t, err)
	assert.Equal(t, "/banking/v2/persons/a/b", f.last(t).Path)
	req, err := c.NewRequest(t.Context(), http.MethodGet, "persons/"+pathEscape("a/b?x"), nil)
	require.NoError(t, err)
	assert.Equal(t, "/banking/v2/persons/a%2Fb%3Fx", req.URL.EscapedPath(), "ids are path-escaped")
	assert.Empty(t, req.URL.RawQuery)
}

func TestPersonsUpdateSendsOnlySetFields(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{"id": "p1"}) })
	_, err := c.Persons.Update(t.Context(), "p1", &PersonUpdateRequest{
		City: ptr("Aarhus"), IsUBO: ptr(false), Ownership: ptr(0.0), Roles: ptr([]string{}),
	})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "PUT /banking/v2/persons/p1", got.Method+" "+got.Path)
	assert.JSONEq(t, `{"city":"Aarhus","is_ubo":false,"ownership":0,"roles":[]}`, string(got.Raw))
}

func TestPersonsCreateBlockRestore(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		switch s.Method + " " + s.Path {
		case "POST /banking/v2/persons":
			writeJSON(w, 200, map[string]any{"id": "p9", "first_name": s.Body["first_name"], "type": s.Body["type"]})
		case "DELETE /banking/v2/persons/p9", "PUT /banking/v2/persons/p9/restore":
			writeJSON(w, 200, map[string]any{"id": "p9"})
		default:
			writeJSON(w, 404, errBody("", "no route", 0))
		}
	})
	p, err := c.Persons.Create(t.Context(), &PersonCreateRequest{FirstName: "Ole", LastName: "Lund", Gender: "male", IsUBO: true, Type: "consumer"})
	require.NoError(t, err)
	assert.Equal(t, "consumer", p.Type)
	assert.JSONEq(t, `{"first_name":"Ole","last_name":"Lund","gender":"male","is_ubo":true,"type":"consumer"}`, string(f.last(t).Raw))

	id, err := c.Persons.Block(t.Context(), "p9")
	require.NoError(t, err)
	assert.Equal(t, "p9", id)
	assert.Equal(t, http.MethodDelete, f.last(t).Method)

	id, err = c.Persons.Restore(t.Context(), "p9")
	require.NoError(t, err)
	assert.Equal(t, "p9", id)
	assert.Equal(t, "/banking/v2/persons/p9/restore", f.last(t).Path)

	_, err = c.Persons.Block(t.Context(), "missing")
	assert.True(t, IsNotFound(err))
}

func TestListPaginationQuery(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		writeJSON(w, 200, map[string]any{
			"list": []map[string]any{{"id": "p1", "screening_info": map[string]any{"status": "clear", "profile": map[string]any{"board_member": true}}}},
			"meta": map[string]any{"number_of_records": 41, "limit": 10, "has_more": true, "sort_by": "createdAt", "sort_type": "DESC"},
		})
	})
	page, err := c.Persons.List(t.Context(), &ListOptions{SortBy: "createdAt", SortType: SortDesc, Limit: 10, Offset: 20})
	require.NoError(t, err)
	q := f.last(t).Query
	assert.Equal(t, "createdAt", q.Get("meta[sort_by]"))
	assert.Equal(t, "DESC", q.Get("meta[sort_type]"))
	assert.Equal(t, "10", q.Get("meta[limit]"))
	assert.Equal(t, "20", q.Get("meta[offset]"))
	assert.Equal(t, Meta{NumberOfRecords: 41, Limit: 10, HasMore: true, SortBy: "createdAt", SortType: SortDesc}, page.Meta)
	require.Len(t, page.List, 1)
	assert.Equal(t, "clear", page.List[0].ScreeningInfo.Status)
	assert.True(t, page.List[0].ScreeningInfo.Profile.BoardMember)

	_, err = c.Persons.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, f.last(t).Query, "no options, no query")

	_, err = c.Corporations.List(t.Context(), &ListOptions{Limit: 30, SortBy: "name", SortType: SortAsc})
	require.NoError(t, err)
	got := f.last(t)
	assert.Equal(t, "/banking/v2/corporations", got.Path)
	assert.Equal(t, "30", got.Query.Get("meta[limit]"))
	assert.Empty(t, got.Query.Get("meta[offset]"))
}

func TestChangeMyPhoneTwoSteps(t *testing.T) {
	for _, v := range []string{"v2", "v3"} {
		t.Run(v, func(t *testing.T) {
			f, c := newFake(t, func(w http.ResponseWriter, s seen) {
				if _, ok := s.Body["current_password"]; ok && s.Body["challenge"] == nil {
					if v == "v3" {
						writeJSON(w, 200, map[string]any{"challenge": map[string]any{"two_fa": map[string]any{"challenge_id": "ph-1", "truncated_phone_number": "+45****99"}}})
						return
					}
					writeJSON(w, 200, map[string]any{"two_fa_code": "111222", "truncated_phone_number": "+45****99"})
					return
				}
				writeJSON(w, 200, map[string]any{"id": "p1", "phone": "+4599999999"})
			}, WithVersion(v))
			in := PhoneChange{CurrentPassword: "pw", Phone: "+4599999999"}
			res, err := c.Persons.ChangeMyPhone(t.Context(), in)
			require.NoError(t, err)
			require.NotNil(t, res.TwoFactor)
			assert.Nil(t, res.Person)
			assert.Equal(t, "+45****99", res.TwoFactor.TruncatedPhone)
			assert.JSONEq(t, `{"current_password":"pw","phone":"+4599999999"}`, string(f.last(t).Raw))

			in.TwoFactorCode, in.ChallengeID = "111222", res.TwoFactor.ChallengeID
			res, err = c.Persons.ChangeMyPhone(t.Context(), in)
			require.NoError(t, err)
			require.NotNil(t, res.Person)
			assert.Equal(t, "+4599999999", res.Person.Phone)
			got := f.last(t)
			assert.Equal(t, "PUT /banking/"+v+"/persons/me", got.Method+" "+got.Path)
			if v == "v2" {
				assert.JSONEq(t, `{"two_fa_code":"111222"}`, string(got.Raw))
			} else {
				assert.JSONEq(t, `{"current_password":"pw","phone":"+4599999999","challenge":{"two_fa":{"challenge_id":"ph-1","two_fa_code":"111222"}}}`, string(got.Raw))
			}
		})
	}
}

func TestUpdateMe(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) { writeJSON(w, 200, map[string]any{"id": "me", "gender": "female"}) })
	p, err := c.Persons.UpdateMe(t.Context(), &MeUpdateRequest{Gender: ptr("female"), CurrentPassword: ptr("old"), Password: ptr("new"), ConfirmPassword: ptr("new")})
	require.NoError(t, err)
	assert.Equal(t, "female", p.Gender)
	assert.JSONEq(t, `{"gender":"female","current_password":"old","password":"new","confirm_password":"new"}`, string(f.last(t).Raw))
}

// The account object is kept as sent, and the corporation is read from it
// once, with the person: corporation_id, else the account's id.
func TestAccountKeepsItsJSONAndItsCorporation(t *testing.T) {
	for raw, want := range map[string]string{
		`{"id":"acc1","corporation_id":"c1","extra":[1,2]}`: "c1",
		`{"id":"acc1"}`:         "acc1",
		`{"corporation_id":""}`: "",
		`"acc1"`:                "", // not an object: no ids
		`null`:                  "",
	} {
		var p Person
		require.NoError(t, roundtrip.Unmarshal([]byte(`{"id":"p1","account":`+raw+`}`), &p), raw)
		assert.Equal(t, want, p.Account.Corporation(), raw)
		if raw == "null" {
			assert.True(t, p.Account.IsZero())
			continue
		}
		assert.JSONEq(t, raw, string(p.Account.Raw), raw)
		out, err := json.Marshal(p)
		require.NoError(t, err)
		assert.Contains(t, string(out), `"account":`+raw)
	}
	var none Person
	out, err := json.Marshal(none)
	require.NoError(t, err)
	assert.NotContains(t, string(out), `"account"`, "an absent account stays absent")
}
