package banking

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/fingraph/fingraph/upstream/roundtrip"
	"github.com/go-json-experiment/json/jsontext"
)

// Timestamp is an ISO 8601 UTC time of the upstream. Unlike time.Time it
// accepts null and "" as the zero time, so one odd field cannot fail the
// decoding of a whole resource.
type Timestamp struct{ time.Time }

// UnmarshalJSON accepts RFC 3339 strings, null and "".
func (t *Timestamp) UnmarshalJSON(b []byte) error { return roundtrip.Unmarshal(b, t) }

// UnmarshalJSONFrom accepts RFC 3339 strings, null and "" from the decoder
// of an upstream answer.
func (t *Timestamp) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	t.Time = time.Time{}
	if dec.PeekKind() == '"' {
		// An RFC 3339 timestamp is parsed from the answer's bytes: the
		// string the token would make is an allocation per timestamp, and
		// listings carry several per record.
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if raw := v[1 : len(v)-1]; len(raw) > 0 && t.Time.UnmarshalText(raw) == nil {
			t.Time = t.UTC()
			return nil
		}
		return t.parse(v)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() == 'n' {
		return nil
	}
	return fmt.Errorf("banking: timestamp: a JSON %s, not a string", tok.Kind())
}

// parse reads the other forms the upstream sends: quoted is the JSON
// string, quotes and escapes included.
func (t *Timestamp) parse(quoted []byte) error {
	b, err := jsontext.AppendUnquote(nil, quoted)
	if err != nil {
		return fmt.Errorf("banking: timestamp: %w", err)
	}
	s := string(b)
	if s == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if v, err := time.Parse(layout, s); err == nil {
			t.Time = v.UTC()
			return nil
		}
	}
	return fmt.Errorf("banking: timestamp %q is not ISO 8601", s)
}

// MarshalJSON writes RFC 3339 in UTC, or null for the zero time.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
}

// Actor is the spec's CreatedBy / UpdatedBy shape.
type Actor struct {
	ID string `json:"id"`
	// Type is "staff" or "person".
	Type     string `json:"type"`
	FullName string `json:"full_name"`
}

// SortType orders a list.
type SortType string

// Sort directions of the pagination query.
const (
	SortAsc  SortType = "ASC"
	SortDesc SortType = "DESC"
)

// ListOptions is the pagination query of list routes. Zero fields are not
// sent, leaving the upstream's defaults.
type ListOptions struct {
	// SortBy is the field to sort by, for example createdAt or name.
	SortBy string
	// SortType is ASC or DESC.
	SortType SortType
	// Limit is the page size.
	Limit int
	// Offset skips that many records; the spec's examples do not show it,
	// so it is sent only when set.
	Offset int
}

// encode appends the options as meta[...] query parameters to path.
func (o *ListOptions) encode(path string) string {
	if o == nil {
		return path
	}
	q := url.Values{}
	if o.SortBy != "" {
		q.Set("meta[sort_by]", o.SortBy)
	}
	if o.SortType != "" {
		q.Set("meta[sort_type]", string(o.SortType))
	}
	if o.Limit > 0 {
		q.Set("meta[limit]", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("meta[offset]", strconv.Itoa(o.Offset))
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// Page is one page of a list route: the spec's List response.
type Page[T any] struct {
	List []T  `json:"list"`
	Meta Meta `json:"meta"`
}

// Meta is the pagination meta of a list response.
type Meta struct {
	NumberOfRecords int      `json:"number_of_records"`
	Limit           int      `json:"limit"`
	HasMore         bool     `json:"has_more"`
	SortBy          string   `json:"sort_by"`
	SortType        SortType `json:"sort_type"`
}

// idResponse is the {"id": ...} answer of block, restore, sign-up and
// deletions.
type idResponse struct {
	ID string `json:"id"`
}

// callID is call for routes without a body that answer {"id": ...}.
func callID(ctx context.Context, c *Client, method, path string) (string, error) {
	out, err := call[idResponse](ctx, c, method, path, nil)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}
