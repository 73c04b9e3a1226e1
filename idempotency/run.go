package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Intent is one mutation as Run carries it out. A mutation declares only
// what is its own: its scope, how to send it, how to find its record
// upstream after a lost answer, and how to tell that a record is its own
// (Candidate.Proven, or the lane). Everything else (claiming the key,
// remembering an unknown outcome, looking it up once it has settled,
// answering) is Run's.
type Intent struct {
	// Scope keeps keys apart per kind of call and per principal: the same
	// key from another principal is another key.
	Scope string
	// Key is the client's idempotency key; empty runs the intent once,
	// remembering nothing (it still takes its lane and marks its record).
	Key string
	// Fingerprint identifies what was asked, so that a key reused for a
	// different request is refused.
	Fingerprint string
	// Records names the kind of upstream record the intent makes ("an order",
	// "a banking transaction"). A record answered to one key, or made by a
	// call without a key, is marked as such for every principal, so that no
	// other key's lookup ever answers it. Empty when the intent makes no
	// record of its own (a change of an existing order).
	Records string
	// Lane, when set, serialises every intent of the lane, keyed or not,
	// of any principal: one at a time is sent, and one whose outcome is
	// unknown holds the lane until it has settled. A lookup whose key's
	// lost send is the lane's last unresolved one (every later send had a
	// known outcome, and its record is marked) knows that the one unmarked
	// record it finds was that send's. The lane names the movement as the
	// upstream sees it, however the input spelled it.
	Lane string
	// Settle is how long after an attempt of unknown outcome its absence
	// upstream is taken as proof that it had no effect; before then the
	// request may still be on its way.
	Settle time.Duration
	// Snapshot, when set, reads what the lookup compares against (an
	// order's amounts) just before each send, under the lane.
	Snapshot func(ctx context.Context) (json.RawMessage, error)
	// Send sends the request once. prior is the failed attempt a retry
	// resumes (its ID is what the retry carries), nil otherwise. It returns
	// the attempt: Succeeded with the record's ID and Result, or a refusal
	// carrying an ID; an error means nothing moved, unless Lost says the
	// outcome is unknown.
	Send func(ctx context.Context, prior *Attempt) (Attempt, error)
	// Lost reports whether Send's error leaves the outcome unknown.
	Lost func(err error) bool
	// Find looks for the record of prior, an attempt of unknown outcome,
	// upstream, made between from and to: from the moment the attempt was
	// sent, less LookupMargin, to now, plus LookupMargin. A record made
	// before the attempt began is never its; Find must not return one.
	// prior.Sent is the Snapshot taken before it, prior.ID the id it
	// carried. An error wrapping ErrUnprovable: the upstream changed in a
	// way that cannot be told apart from the attempt. Nil: the upstream
	// cannot be searched, and the outcome stays unknown.
	Find func(ctx context.Context, prior Attempt, from, to time.Time) ([]Candidate, error)
}

// Candidate is a record Find found that may be the attempt's.
type Candidate struct {
	ID     string
	Result json.RawMessage
	// Proven: the record carries the attempt's own reference (an order's
	// number the gateway chose for the key, the id a refusal gave it).
	// Otherwise it only looks like the attempt, and answers the key only
	// when the lane proves nothing else could have made it.
	Proven bool
}

// Outcome is what Run answers.
type Outcome struct {
	Attempt
	// Replayed: the outcome was remembered from an earlier call with the
	// key (which already announced it).
	Replayed bool
}

// Unknown is the error of an intent whose outcome is unknown: its request
// may have reached the upstream and its answer was lost, and the gateway
// could not (yet) find out what it did. Nothing is sent again for the key
// until a lookup can tell.
type Unknown struct {
	// Keyed: the intent had a key, and a retry with it looks again.
	Keyed bool
	// Final: no retry with the key can ever tell (the upstream offers no
	// lookup, or what it shows can never be attributed); only the client,
	// checking the upstream itself, can.
	Final bool
	// SentAt is when the first attempt of unknown outcome ran.
	SentAt time.Time
	// Why says what the gateway could not tell.
	Why string
	// Err is the transport's error, when this call lost the answer.
	Err error
}

func (u *Unknown) Error() string { return "idempotency: outcome unknown: " + u.Why }
func (u *Unknown) Unwrap() error { return u.Err }

// ErrLaneBusy: another intent of the lane is being sent, or its outcome is
// unknown and has not settled; nothing was sent. Run answers it as a
// *LaneBusy, which says when the lane frees.
var ErrLaneBusy = errors.New("idempotency: another movement of the same kind is in progress")

// LaneBusy is ErrLaneBusy with when the lane frees at the latest: the end
// of its holder's lease, or of the hold after an unknown outcome.
type LaneBusy struct {
	Until time.Time
}

func (e *LaneBusy) Error() string        { return ErrLaneBusy.Error() }
func (e *LaneBusy) Is(target error) bool { return target == ErrLaneBusy }

// ErrUnprovable is what Find wraps when what it found cannot be told apart
// from the attempt's effect or another's.
var ErrUnprovable = errors.New("idempotency: the upstream changed in a way that cannot be attributed")

// LookupMargin is how much earlier than the gateway's clock says an
// upstream may date a record: its timestamps have whole seconds (up to 1 s
// early) and its clock may run up to 1 s behind the gateway's. A lookup
// reads records made from the attempt's send less the margin, never older
// ones; an unknown outcome holds its lane until it has settled plus twice
// the margin, so that the next attempt of the lane begins more than a
// margin after anything the unknown one may have made, and never finds it.
const LookupMargin = 2 * time.Second

// Why an outcome stays unknown.
const (
	whyLost       = "the gateway did not send it again"
	whyNoLookup   = "the upstream offers no way to find out what it did"
	whyReadFailed = "the gateway could not read the upstream to find out what it did"
	whyNotYet     = "the upstream does not show it yet, and it may still be under way"
	whyNotProven  = "the upstream shows a matching record the gateway cannot prove is this attempt's (another request could have made it)"
	whyChanged    = "the upstream changed in a way that cannot be told apart from this attempt's effect"
)

// Run carries out in at most once per (Scope, Key):
//   - the key is claimed (Do); a remembered success is replayed;
//   - the lane, if any, is taken;
//   - a retry of an attempt of unknown outcome looks for its record: a
//     proven one (or the one the lane proves) is answered; an absence once
//     the attempt has settled lets it send again; anything else stays
//     unknown;
//   - otherwise it sends; a lost answer is remembered as unknown (and
//     holds the lane until it settles) and answered as *Unknown.
func (s *Store) Run(ctx context.Context, in Intent) (Outcome, error) {
	if in.Key == "" {
		return s.runOnce(ctx, in)
	}
	ran := false
	holder := Key(in.Scope, in.Key)
	a, err := s.Do(ctx, in.Scope, in.Key, in.Fingerprint, func(ctx context.Context, prior *Attempt) (Attempt, error) {
		var (
			l   *lane
			err error
		)
		if in.Lane != "" {
			if l, err = s.takeLane(ctx, in.Lane, holder); err != nil {
				return Attempt{}, err
			}
		}
		ran = true
		return s.attempt(ctx, in, prior, holder, l)
	})
	switch {
	case err != nil:
		return Outcome{}, err
	case a.Unknown:
		u := unknownError(a)
		u.Final = u.Final || in.Find == nil
		return Outcome{}, u
	}
	return Outcome{Attempt: a, Replayed: !ran}, nil
}

// attempt is one run of a keyed intent under its claim (and lane): it
// resolves an unknown prior, or sends. It returns the attempt to remember.
func (s *Store) attempt(ctx context.Context, in Intent, prior *Attempt, holder string, l *lane) (a Attempt, err error) {
	t := turn{marks: in.Records != ""}
	defer func() { l.leave(ctx, s, t, in.Settle, &a) }()
	if prior != nil && prior.Unknown {
		found, resend, err := s.resolve(ctx, in, *prior, holder, l)
		if err != nil || !resend {
			if err == nil && found.Succeeded {
				t.resolved, t.found = prior.LaneMark, true
			}
			return found, err
		}
		// Certainly had no effect: it no longer stands in anyone's way.
		t.resolved = prior.LaneMark
	}
	a, _, err = s.send(ctx, in, prior, holder, &t)
	return a, err
}

// turn is what one call did in its lane, for leave.
type turn struct {
	// marks: the intent's records are marked (Intent.Records), so a
	// record made or found is never another key's.
	marks bool
	// sent: the request was sent; unknown: its answer was lost; unmarked:
	// it made a record that could not be marked.
	sent, unknown, unmarked bool
	// resolved is the lane mark of the prior attempt this call resolved;
	// found: it found the prior's record (rather than its absence).
	resolved string
	found    bool
}

// send takes the snapshot, sends once and returns an unknown attempt (and
// the transport's error, lost) when the answer was lost.
func (s *Store) send(ctx context.Context, in Intent, prior *Attempt, holder string, t *turn) (a Attempt, lost, err error) {
	var snap json.RawMessage
	if in.Snapshot != nil {
		if snap, err = in.Snapshot(ctx); err != nil {
			return Attempt{}, nil, err
		}
	}
	sentAt := s.now()
	t.sent = true
	a, err = in.Send(ctx, prior)
	if err != nil && in.Lost != nil && in.Lost(err) {
		t.unknown = true
		u := Attempt{Unknown: true, Sent: snap, SentAt: sentAt.UnixMilli(), EndedAt: s.now().UnixMilli(), Why: whyLost}
		if prior != nil {
			// A refused order's id, which the retry carries again. An unknown
			// prior was proven to have had no effect before this send.
			u.ID = prior.ID
		}
		return u, err, nil
	}
	if err != nil {
		return a, nil, err
	}
	if a.Succeeded && in.Records != "" && a.ID != "" && !s.mark(ctx, in.Records, a.ID, holder) {
		t.unmarked = true
	}
	return a, nil, nil
}

// resolve finds out what an attempt of unknown outcome did. It returns the
// found record as a success, or resend when the attempt certainly had no
// effect, or the prior, still unknown (to be remembered with why).
func (s *Store) resolve(ctx context.Context, in Intent, prior Attempt, holder string, l *lane) (found Attempt, resend bool, err error) {
	still := func(why string, final bool) (Attempt, bool, error) {
		p := prior
		p.Why, p.Final = why, final
		return p, false, nil
	}
	if in.Find == nil {
		return still(whyNoLookup, true)
	}
	// Only records made after the attempt began can be its own: an older
	// one (another's, whose answer was lost before this attempt took the
	// lane) is never answered to this key.
	now := s.now()
	from := time.UnixMilli(prior.SentAt).Add(-LookupMargin)
	to := now.Add(LookupMargin)
	cs, err := in.Find(ctx, prior, from, to)
	if err == nil && in.Records != "" {
		cs, err = s.notOthers(ctx, in.Records, holder, cs)
	}
	if errors.Is(err, ErrUnprovable) {
		// What changed stays changed: no later lookup can tell either.
		return still(whyChanged, true)
	}
	if err != nil {
		s.log.WarnContext(ctx, "idempotency: could not look up an attempt of unknown outcome", "err", err)
		return still(whyReadFailed, false)
	}
	var proven []Candidate
	for _, c := range cs {
		if c.Proven {
			proven = append(proven, c)
		}
	}
	// Only this key's lane, kept since the lost attempt, proves that a
	// record that merely looks like the attempt is the attempt's.
	if len(proven) == 0 && len(cs) == 1 && l.kept(prior) {
		proven = cs
	}
	switch {
	case len(proven) == 1:
		c := proven[0]
		if in.Records != "" {
			if mine, err := s.own(ctx, ownerKey(in.Records, c.ID), holder); err != nil || !mine {
				return still(whyNotProven, false)
			}
		}
		return Attempt{ID: c.ID, Succeeded: true, Result: c.Result}, false, nil
	case len(cs) > 0:
		// Without a lane, or without records to mark (an order's change,
		// whose lane a known change closes for good), nothing can ever
		// prove a look-alike the key's. With both, the look-alikes may all
		// turn out others' (their keys claim them), or the sends opened
		// after the key's resolve, and then the lane proves again.
		return still(whyNotProven, in.Lane == "" || in.Records == "")
	case now.Sub(time.UnixMilli(prior.EndedAt)) < in.Settle:
		return still(whyNotYet, false)
	}
	return Attempt{}, true, nil
}

// runOnce carries out an intent without a key: nothing is remembered, but
// it takes its lane (so that keyed lookups can count on it) and marks its
// record, which then never answers any key.
func (s *Store) runOnce(ctx context.Context, in Intent) (Outcome, error) {
	holder := unkeyedHolder()
	var l *lane
	if in.Lane != "" {
		var err error
		if l, err = s.takeLane(ctx, in.Lane, holder); err != nil {
			return Outcome{}, err
		}
	}
	t := turn{marks: in.Records != ""}
	a, lost, err := s.send(ctx, in, nil, holder, &t)
	l.leave(ctx, s, t, in.Settle, &a)
	if err != nil {
		return Outcome{}, err
	}
	if a.Unknown {
		u := unknownError(a)
		u.Keyed, u.Final, u.Err = false, true, lost
		return Outcome{}, u
	}
	return Outcome{Attempt: a}, nil
}

func unknownError(a Attempt) *Unknown {
	why := a.Why
	if why == "" {
		why = whyLost
	}
	u := &Unknown{Keyed: true, Final: a.Final, Why: why}
	if a.SentAt != 0 {
		u.SentAt = time.UnixMilli(a.SentAt)
	}
	return u
}

// unkeyedHolder names a call without a key: it owns its record and its lane
// turn, and no key ever matches it.
func unkeyedHolder() string { return randomName("unkeyed-") }

func randomName(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// mark records that the upstream record id (of kind records) is holder's,
// and reports whether it is.
func (s *Store) mark(ctx context.Context, records, id, holder string) bool {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	mine, err := s.own(wctx, ownerKey(records, id), holder)
	if err != nil {
		s.log.WarnContext(ctx, "idempotency: could not mark an upstream record as a call's", "err", err)
	}
	return mine
}

// notOthers drops the candidates another key, or a call without a key,
// already owns.
func (s *Store) notOthers(ctx context.Context, records, holder string, cs []Candidate) ([]Candidate, error) {
	out := cs[:0:0]
	for _, c := range cs {
		e, err := s.kv.Get(ctx, ownerKey(records, c.ID))
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			out = append(out, c)
		case err != nil:
			return nil, fmt.Errorf("idempotency: owner: %w", err)
		case string(e.Value()) == holder:
			out = append(out, c)
		}
	}
	return out, nil
}

// laneRecord is the stored state of a lane.
type laneRecord struct {
	Holder     string `json:"holder,omitempty"`
	LeaseUntil int64  `json:"lease_until,omitempty"`
	// Unknown: the holder's last attempt has an unknown outcome; the lane
	// is held until it settles (LeaseUntil).
	Unknown bool `json:"unknown,omitempty"`
	// Open names the sends of the lane whose outcome is unknown and not
	// yet resolved, oldest first (Attempt.LaneMark). A send whose record
	// is marked, or that made none, changes nothing here: its record can
	// never answer another key.
	Open []string `json:"open,omitempty"`
}

// maxOpen bounds a lane's open sends; the oldest beyond it is dropped,
// which only takes the lane's proof from its own key.
const maxOpen = 32

// lane is a lane this call holds.
type lane struct {
	key    string
	holder string
	rev    uint64
	// prev is the lane's record when this call took it (empty when the
	// lane was free).
	prev laneRecord
}

func laneKey(name string) string { return Key("lane", name) }

// takeLane takes the lane for holder, waiting while another holds it (at
// most the store's max wait, then a *LaneBusy). The lane's own holder of
// an unknown attempt takes it back at once.
func (s *Store) takeLane(ctx context.Context, name, holder string) (*lane, error) {
	k := laneKey(name)
	deadline := time.Now().Add(s.maxWait)
	for {
		e, err := s.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			b, _ := json.Marshal(laneRecord{Holder: holder, LeaseUntil: s.leaseEnd()})
			rev, err := s.kv.Create(ctx, k, b)
			if casLost(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("idempotency: lane: %w", err)
			}
			return &lane{key: k, holder: holder, rev: rev}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency: lane: %w", err)
		}
		var cur laneRecord
		_ = json.Unmarshal(e.Value(), &cur)
		if cur.Holder != holder && cur.LeaseUntil > s.now().UnixMilli() {
			if hold := time.UnixMilli(cur.LeaseUntil).Sub(s.now()); cur.Unknown && hold > time.Until(deadline) {
				// An unknown outcome's hold ends when it says, after this
				// call would stop waiting: say so now, not after the wait.
				return nil, &LaneBusy{Until: time.UnixMilli(cur.LeaseUntil)}
			}
			if err := s.wait(ctx, k, e.Revision(), time.UnixMilli(cur.LeaseUntil), deadline); err != nil {
				if errors.Is(err, ErrInProgress) {
					return nil, &LaneBusy{Until: time.UnixMilli(cur.LeaseUntil)}
				}
				return nil, err
			}
			continue
		}
		taken := cur
		taken.Holder, taken.LeaseUntil, taken.Unknown = holder, s.leaseEnd(), false
		b, _ := json.Marshal(taken)
		rev, err := s.kv.Update(ctx, k, b, e.Revision())
		if casLost(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("idempotency: lane: %w", err)
		}
		return &lane{key: k, holder: holder, rev: rev, prev: cur}, nil
	}
}

// kept reports whether every send of the lane after prior's, an attempt
// of unknown outcome, is resolved or had a known outcome: then whatever
// unmarked record of the lane's shape was made since prior was sent is
// prior's.
func (l *lane) kept(prior Attempt) bool {
	if l == nil || prior.LaneMark == "" {
		return false
	}
	open := l.prev.Open
	return len(open) > 0 && open[len(open)-1] == prior.LaneMark
}

// leave gives the lane up after turn t. An unknown send holds it until the
// attempt has settled (plus twice the lookup margin), and opens a mark,
// which it sets in a. A resolved prior closes its own. A known effect
// whose record is not marked (an order change, a record that could not be
// marked) closes every mark: no lookup can tell it from theirs any more.
// A turn that only looked leaves the lane's record as it found it.
func (l *lane) leave(ctx context.Context, s *Store, t turn, settle time.Duration, a *Attempt) {
	if l == nil {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	rec := l.prev
	rec.Open = slices.Clone(rec.Open)
	if t.resolved != "" {
		rec.Open = slices.DeleteFunc(rec.Open, func(m string) bool { return m == t.resolved })
	}
	if rec.Holder == l.holder && t.resolved != "" {
		// This key's own hold ends with its resolved attempt.
		rec.Holder, rec.LeaseUntil, rec.Unknown = "", 0, false
	}
	if (t.sent && !t.unknown && (!t.marks || t.unmarked)) || (t.found && !t.marks) {
		rec.Open = nil
	}
	mark := ""
	if t.sent && t.unknown {
		// Held until the attempt has settled: then whatever it did shows
		// upstream, and the next holder's snapshot sees it. Twice the
		// lookup margin more, so that the next holder's lookup window
		// (which opens a margin before its send) never reaches back to it.
		mark = randomName("send-")
		rec.Holder, rec.Unknown = l.holder, true
		rec.LeaseUntil = time.UnixMilli(a.EndedAt).Add(settle + 2*LookupMargin).UnixMilli()
		rec.Open = append(rec.Open, mark)
		if len(rec.Open) > maxOpen {
			rec.Open = rec.Open[len(rec.Open)-maxOpen:]
		}
	}
	var err error
	if len(rec.Open) == 0 && rec.LeaseUntil <= s.now().UnixMilli() {
		err = s.kv.Delete(wctx, l.key, jetstream.LastRevision(l.rev))
	} else {
		b, _ := json.Marshal(rec)
		_, err = s.kv.Update(wctx, l.key, b, l.rev)
	}
	if err != nil {
		// The lane stays held until its lease ends; the next lookup of the
		// key does not count on it.
		s.log.WarnContext(ctx, "idempotency: could not leave a lane; it frees itself when its lease ends", "err", err)
		mark = ""
	}
	if t.sent && t.unknown {
		a.LaneMark = mark
	}
}
