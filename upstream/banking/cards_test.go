package banking

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCardsRoutesAreVersioned(t *testing.T) {
	f, c := newFake(t, func(w http.ResponseWriter, s seen) {
		switch {
		case s.Path == "/banking/v2/cards":
			writeJSON(w, 200, []any{map[string]any{"id": "k1", "status": "ACTIVE", "available_balance": 1500,
				"expiry": map[string]any{"year": "2030", "month": "12"}, "pan": map[string]any{"bin": "555544", "last_four": "1234"},
				"cardholder": map[string]any{"external_id": "p1", "id": "h1"}}})
		case strings.HasSuffix(s.Path, "/credentials"):
			writeJSON(w, 200, map[string]any{"pan": "5555440000001234", "cvc2": "123"})
		case strings.HasSuffix(s.Path, "/transactions"):
			writeJSON(w, 200, map[string]any{"list": []any{map[string]any{"id": "t1", "source_amount": 250, "source_currency": "EUR"}},
				"meta": map[string]any{"number_of_records": 1, "limit": 5, "has_more": false, "sort_by": "createdAt", "sort_type": "DESC"}})
		case s.Path == "/banking/v2/cards/issue":
			writeJSON(w, 200, map[string]any{"id": "k2"})
		case s.Path == "/banking/v2/card/simulation":
			writeJSON(w, 200, map[string]any{"authorised": false, "code": "51"})
		default:
			writeJSON(w, 404, errBody("", "no", 0))
		}
	})
	list, err := c.Cards.List(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, int64(1500), list[0].AvailableBalance)
	assert.Equal(t, "1234", list[0].PAN.LastFour)
	assert.Equal(t, "p1", list[0].Cardholder.ExternalID)

	cr, err := c.Cards.Credentials(t.Context(), "k1")
	require.NoError(t, err)
	assert.Equal(t, "5555440000001234", cr.PAN.Reveal())
	assert.Equal(t, "[REDACTED]", fmt.Sprint(cr.PAN), "a PAN must not print")
	assert.NotContains(t, fmt.Sprintf("%+v", cr), "123")

	txs, err := c.Cards.Transactions(t.Context(), "k1", &ListOptions{Limit: 5, SortBy: "createdAt", SortType: SortDesc})
	require.NoError(t, err)
	assert.Equal(t, int64(250), txs.List[0].SourceAmount)
	assert.Equal(t, "5", f.last(t).Query.Get("meta[limit]"))
	assert.Equal(t, "/banking/v2/cards/k1/transactions", f.last(t).Path)

	id, err := c.Cards.Issue(t.Context(), &IssueCardRequest{Card: IssueCardDetails{Type: CardTypeVirtual}})
	require.NoError(t, err)
	assert.Equal(t, "k2", id)
	assert.Equal(t, "VIRTUAL", f.last(t).Body["card"].(map[string]any)["type"])

	a, err := c.Cards.Simulate(t.Context(), &SimulateCardRequest{CardID: "k1", Amount: 100, Currency: "EUR"})
	require.NoError(t, err)
	assert.False(t, a.Authorised)
	assert.Equal(t, "NOT_SUFFICENT_FUNDS", AuthorisationName(a.Code))
	assert.Equal(t, "k1", f.last(t).Body["card_id"])
}

// TestKYCUploadStreamsMultipart checks the wire form: multipart/form-data
// with a type field and the file part, sent chunked (no length known up
// front, because the body is streamed).
func TestKYCUploadStreamsMultipart(t *testing.T) {
	var gotType, gotName, gotFileType string
	var gotFile []byte
	var chunked bool
	srv := http.NewServeMux()
	srv.HandleFunc("POST /banking/v2/corporations/{id}/kyc-documents", func(w http.ResponseWriter, r *http.Request) {
		chunked = r.ContentLength == -1
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		require.NoError(t, err)
		require.Equal(t, "multipart/form-data", mt)
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			b, _ := io.ReadAll(p)
			switch p.FormName() {
			case "type":
				gotType = string(b)
			case "file":
				gotName, gotFileType, gotFile = p.FileName(), p.Header.Get("Content-Type"), b
			}
		}
		w.Header().Set(HeaderAccessToken, "fresh")
		writeJSON(w, 200, map[string]any{"id": "d1", "verifying_status": "noMark", "name": gotName})
	})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := NewClient(ts.URL + "/banking")
	require.NoError(t, err)
	store := NewTokenStore("tok")
	ctx := WithTokenSource(t.Context(), store)
	data := bytes.Repeat([]byte("%PDF"), 100_000)
	doc, err := c.KYC.Upload(ctx, "c1", &KYCUpload{Filename: `a "b".pdf`, ContentType: "application/pdf", File: bytes.NewReader(data)})
	require.NoError(t, err)
	assert.Equal(t, "d1", doc.ID)
	assert.Equal(t, "corporate", gotType)
	assert.Equal(t, `a "b".pdf`, gotName)
	assert.Equal(t, "application/pdf", gotFileType)
	assert.Equal(t, data, gotFile)
	assert.True(t, chunked, "the body should be streamed, not sent with a precomputed length")
	tok, _ := store.Token(ctx)
	assert.Equal(t, "fresh", tok, "the refreshed token is written back")
}

func TestCardPathsStayUnderTheVersion(t *testing.T) {
	c, err := NewClient("http://up.test/banking/")
	require.NoError(t, err)
	req, err := c.NewRequest(t.Context(), http.MethodGet, "cards/k1?meta%5Blimit%5D=2", nil)
	require.NoError(t, err)
	assert.Equal(t, "/banking/v2/cards/k1", req.URL.Path)
	assert.Equal(t, "2", req.URL.Query().Get("meta[limit]"))
	_, err = c.NewRequest(t.Context(), http.MethodGet, "../cards", nil)
	require.Error(t, err, "a path cannot climb out of the version")
	_, err = c.Cards.Get(t.Context(), "..")
	require.Error(t, err, "an id cannot move the call to another route")
}
