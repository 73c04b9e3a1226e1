package roundtrip

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Deferred is a part of an upstream answer kept as its JSON and decoded
// (by Unmarshal's rules) only when it is read: a listing decodes every
// record, and most reads of it use few of each record's parts. A customer
// listing's stored cards and subscriptions are most of its bytes; decoding
// them as JSON values and not as structs takes about a third off the
// listing's decoding (docs/performance.md).
//
// The answer is still checked to be JSON when it is decoded; only a part
// of the wrong shape (a string where a list belongs) waits until the part is
// read, and fails that read alone. The zero Deferred is an absent part
// (JSON null), which decodes to T's zero value.
type Deferred[T any] struct{ raw jsontext.Value }

// Decode decodes the part.
func (d Deferred[T]) Decode() (T, error) {
	var v T
	if d.IsZero() {
		return v, nil
	}
	err := Unmarshal(d.raw, &v)
	return v, err
}

// IsZero reports whether the part was absent or null.
func (d Deferred[T]) IsZero() bool { return len(d.raw) == 0 || bytes.Equal(d.raw, []byte("null")) }

// UnmarshalJSONFrom keeps the part as it was sent, in a copy of its own:
// the decoder's buffer is not the part's to keep.
func (d *Deferred[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	d.raw = v.Clone()
	return nil
}

// UnmarshalJSON does the same for encoding/json.
func (d *Deferred[T]) UnmarshalJSON(b []byte) error {
	d.raw = bytes.Clone(b)
	return nil
}

// MarshalJSONTo writes the part as T holds it, never the bytes as sent: an
// answer can carry fields T leaves out on purpose (an order's payment
// carries the stored card's token, which CardDetails has no place for),
// and what the gateway writes (an idempotency record) must not gain them.
func (d Deferred[T]) MarshalJSONTo(enc *jsontext.Encoder) error {
	if d.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	v, err := d.Decode()
	if err != nil {
		return err
	}
	return jsonv2.MarshalEncode(enc, v)
}

// MarshalJSON does the same for encoding/json.
func (d Deferred[T]) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	v, err := d.Decode()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// String keeps the bytes as sent out of anything printed with fmt (a
// record logged with %+v): they can hold what T leaves out.
func (d Deferred[T]) String() string { return "(deferred JSON)" }

// GoString does the same for %#v.
func (d Deferred[T]) GoString() string { return d.String() }
