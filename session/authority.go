package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/engine"
)

// The ends of authority.
//
// A session rests on grants: the authorities that admitted it (the person
// who signed in, the corporation's API keys, the payments customer). When
// one of them ends (a password changed, a person blocked, an API key
// deleted, roles changed), every session and stream it admitted must end,
// on every replica, not only the one that saw the change.
//
// An end of authority is a record in a JetStream key-value bucket, one per
// grant, that every replica watches:
//
//   - A session stores, per grant, the generation of the grant's record it
//     was created under (or last proved itself against): Session.Grants.
//   - Revoke raises the grant's generation and marks every session of an
//     older one ended, except the one that made the change (a password
//     changed in one session keeps that session).
//   - RequireProof raises the generation and marks every session of an
//     older one as having to prove its credential to the upstream again:
//     for an API key deletion, which the gateway cannot map to sessions
//     (the upstream shows key ids, sessions hold only tokens), the upstream
//     says which tokens it still honours.
//
// Every request checks its session against the records (Verdict); every
// replica's watch tells the websocket and stream registry (Sockets), which
// ends or re-proves what it holds at once. A replica that missed a record
// (restarted, partitioned) reads the bucket when its watch is not in place,
// so it finds out at the session's next request at the latest.
//
// Generations are wall-clock nanoseconds, raised by at least one, so a
// record that expired and was made anew still outranks every generation a
// live session can hold: records outlive sessions (the bucket's TTL is the
// session TTL and an hour).

// AuthorityBucket is the key-value bucket of ended authorities.
const AuthorityBucket = "authority"

// Reason says why an authority ended.
type Reason string

// Reasons.
const (
	ReasonSignedOut       Reason = "signed_out"
	ReasonPasswordChanged Reason = "password_changed"
	ReasonBlocked         Reason = "blocked"
	ReasonRolesChanged    Reason = "roles_changed"
	ReasonAPIKeyDeleted   Reason = "api_key_deleted"
)

// Ending is the error of a session whose authority ended: it says why, and
// whether the principal is refused outright (Forbidden: a block) or only
// has to sign in again.
type Ending struct{ Reason Reason }

func (e *Ending) Error() string {
	switch e.Reason {
	case ReasonPasswordChanged:
		return "the password was changed; sign in again"
	case ReasonBlocked:
		return "the person is blocked"
	case ReasonRolesChanged:
		return "the person's roles changed; sign in again"
	case ReasonAPIKeyDeleted:
		return "the API key was deleted"
	}
	return "the session has ended; sign in again"
}

// Forbidden reports whether signing in again cannot help (a block).
func (e *Ending) Forbidden() bool { return e.Reason == ReasonBlocked }

// Is makes every Ending match ErrEnded.
func (e *Ending) Is(target error) bool { return target == ErrEnded }

// EndingOf returns the Ending of err, or the plain one of a session that
// ended (signed out, expired) when err is another ErrEnded.
func EndingOf(err error) (*Ending, bool) {
	var e *Ending
	if errors.As(err, &e) {
		return e, true
	}
	if errors.Is(err, ErrEnded) {
		return &Ending{Reason: ReasonSignedOut}, true
	}
	return nil, false
}

// Grant names of the authorities a session rests on.

// PersonGrant is a person's own authority: her password, block and roles.
func PersonGrant(personID string) string { return "person:" + personID }

// APIKeysGrant is the authority of a corporation's API keys.
func APIKeysGrant(corporationID string) string { return "apikeys:" + corporationID }

// CustomerGrant is a payments customer's key.
func CustomerGrant(customerID string) string { return "customer:" + customerID }

// grantsOf names the grants of a new session from what it knows.
func grantsOf(s *Session) []string {
	switch s.Kind {
	case Person:
		if s.PersonID != "" {
			return []string{PersonGrant(s.PersonID)}
		}
	case APIClient:
		if s.CorporationID != "" {
			return []string{APIKeysGrant(s.CorporationID)}
		}
	case Customer:
		if s.PrincipalID != "" {
			return []string{CustomerGrant(s.PrincipalID)}
		}
	}
	return nil
}

// record is the bucket's entry of one grant.
type record struct {
	Grant string `json:"grant"`
	// Gen rises with every end of the grant.
	Gen uint64 `json:"gen"`
	// EndGen: sessions that hold a generation below it have ended, except
	// Keep.
	EndGen uint64 `json:"end_gen,omitempty"`
	Keep   string `json:"keep,omitempty"`
	// ProveGen: sessions that hold a generation below it must prove their
	// credential upstream before they go on.
	ProveGen uint64 `json:"prove_gen,omitempty"`
	Reason   Reason `json:"reason"`
	// Pending announces an end that may be under way upstream (a block
	// being made), for sessions below PendingGen: one the upstream refuses
	// meanwhile ended for it (see socket.why). It ends nothing itself.
	Pending    Reason `json:"pending,omitempty"`
	PendingGen uint64 `json:"pending_gen,omitempty"`
}

// cause is the reason the record gives a session that ended while it held
// generation seen: its end, or the end under way upstream.
func (r record) cause(id string, seen uint64) (Reason, bool) {
	if r.judge(id, seen) != Standing {
		return r.Reason, true
	}
	if r.Pending != "" && r.PendingGen > seen {
		return r.Pending, true
	}
	return "", false
}

// Verdict is what the records say of one session.
type Verdict int

// Verdicts.
const (
	Standing Verdict = iota
	Revoked
	MustProve
)

// judge applies r to a session with id that holds generation seen.
func (r record) judge(id string, seen uint64) Verdict {
	if r.EndGen > seen && id != r.Keep {
		return Revoked
	}
	if r.ProveGen > seen {
		return MustProve
	}
	return Standing
}

// Authority keeps the ends of authority of every replica (see above).
type Authority struct {
	kv  jetstream.KeyValue
	now func() time.Time

	// mu is read by every request (Verdict), written by the watch.
	mu      sync.RWMutex
	live    bool
	records map[string]record // by grant
	watch   map[*func(grant string)]struct{}
}

// NewAuthority wraps the opened bucket (engine.KeyValue(ctx,
// AuthorityBucket, AuthorityTTL(sessionTTL))).
func NewAuthority(kv jetstream.KeyValue) *Authority {
	return &Authority{kv: kv, now: time.Now, records: map[string]record{}, watch: map[*func(string)]struct{}{}}
}

// AuthorityTTL is how long the bucket keeps a record: longer than any
// session created before it can live.
func AuthorityTTL(sessionTTL time.Duration) time.Duration { return sessionTTL + time.Hour }

func grantKey(grant string) string {
	sum := sha256.Sum256([]byte("fingraph-grant\x00" + grant))
	return hex.EncodeToString(sum[:20])
}

// Run loads every record and follows the bucket until ctx is done. It
// returns once the records present are loaded, so that no request after it
// is judged on less than the bucket holds.
func (a *Authority) Run(ctx context.Context) error {
	w, err := a.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("session: watching %s: %w", AuthorityBucket, err)
	}
	loaded := make(chan struct{})
	go func() {
		defer func() {
			_ = w.Stop()
			a.mu.Lock()
			a.live = false
			a.mu.Unlock()
		}()
		initial := true
		for {
			select {
			case <-ctx.Done():
				if initial {
					close(loaded)
				}
				return
			case e, ok := <-w.Updates():
				if !ok {
					if initial {
						close(loaded)
					}
					return
				}
				if e == nil {
					if initial {
						initial = false
						a.mu.Lock()
						a.live = true
						a.mu.Unlock()
						close(loaded)
					}
					continue
				}
				a.apply(e, !initial)
			}
		}
	}()
	select {
	case <-loaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// apply keeps one watched entry and, for a change after the initial load,
// tells the watchers.
func (a *Authority) apply(e jetstream.KeyValueEntry, notify bool) {
	if e.Operation() != jetstream.KeyValuePut {
		return
	}
	var r record
	if err := json.Unmarshal(e.Value(), &r); err != nil || r.Grant == "" {
		return
	}
	a.mu.Lock()
	if old, ok := a.records[r.Grant]; ok && old.Gen > r.Gen {
		a.mu.Unlock()
		return
	}
	a.records[r.Grant] = r
	var fns []func(string)
	if notify {
		for f := range a.watch {
			fns = append(fns, *f)
		}
	}
	a.mu.Unlock()
	for _, f := range fns {
		f(r.Grant)
	}
}

// Watch calls fn with the grant of every record changed from now on, on
// the watch's goroutine (fn must not block), until ctx is done.
func (a *Authority) Watch(ctx context.Context, fn func(grant string)) {
	f := &fn
	a.mu.Lock()
	a.watch[f] = struct{}{}
	a.mu.Unlock()
	context.AfterFunc(ctx, func() {
		a.mu.Lock()
		delete(a.watch, f)
		a.mu.Unlock()
	})
}

// known returns the record of grant this replica holds in memory.
func (a *Authority) known(grant string) (record, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	r, ok := a.records[grant]
	return r, ok
}

// lookup returns the record of grant: from memory while the watch is in
// place, else from the bucket.
func (a *Authority) lookup(ctx context.Context, grant string) (record, error) {
	a.mu.RLock()
	r, ok := a.records[grant]
	live := a.live
	a.mu.RUnlock()
	if live {
		if !ok {
			return record{}, nil
		}
		return r, nil
	}
	r, _, err := a.read(ctx, grant)
	return r, err
}

// read returns the bucket's record of grant and its revision (0 when
// there is none).
func (a *Authority) read(ctx context.Context, grant string) (record, uint64, error) {
	var e jetstream.KeyValueEntry
	err := engine.Ask(ctx, func(ctx context.Context, _ int) error {
		var err error
		e, err = a.kv.Get(ctx, grantKey(grant))
		return err
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return record{}, 0, nil
	}
	if err != nil {
		return record{}, 0, fmt.Errorf("session: reading an authority: %w", err)
	}
	var r record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return record{}, 0, fmt.Errorf("session: decoding an authority: %w", err)
	}
	return r, e.Revision(), nil
}

// stamp returns the generations of grants as a new session holds them: read
// from the bucket, not from the watch, so that a session begun right after
// an end of its authority on another replica is never judged by an older
// record than the one that ended it.
func (a *Authority) stamp(ctx context.Context, grants []string) (map[string]uint64, error) {
	if len(grants) == 0 {
		return nil, nil
	}
	out := make(map[string]uint64, len(grants))
	for _, g := range grants {
		r, _, err := a.read(ctx, g)
		if err != nil {
			return nil, err
		}
		out[g] = r.Gen
	}
	return out, nil
}

// Verdict judges s against the records of its grants: Revoked, MustProve
// (each with the Ending it meets, or would meet should the proof fail), or
// Standing. A session without grants (the sandbox's anonymous
// session, staff) always stands.
func (a *Authority) Verdict(ctx context.Context, s *Session) (Verdict, *Ending, error) {
	verdict, why := Standing, (*Ending)(nil)
	for g, seen := range s.Grants {
		r, err := a.lookup(ctx, g)
		if err != nil {
			return Standing, nil, err
		}
		switch r.judge(s.ID, seen) {
		case Revoked:
			return Revoked, &Ending{Reason: r.Reason}, nil
		case MustProve:
			verdict, why = MustProve, &Ending{Reason: r.Reason}
		}
	}
	return verdict, why, nil
}

// Revoke ends every session under grant, on every replica, except the one
// with id keep ("" for none).
func (a *Authority) Revoke(ctx context.Context, grant string, why Reason, keep string) error {
	return a.change(ctx, grant, func(r *record) {
		r.EndGen, r.Keep, r.Reason = r.Gen, keep, why
	})
}

// RequireProof makes every session under grant prove its credential to the
// upstream before it goes on (see Handler.Prove), on every replica.
func (a *Authority) RequireProof(ctx context.Context, grant string, why Reason) error {
	return a.change(ctx, grant, func(r *record) {
		r.ProveGen, r.Reason = r.Gen, why
	})
}

// Announce records that an end of grant for why may be under way upstream
// (see record.Pending); Withdraw takes the announcement back when it did
// not happen.
func (a *Authority) Announce(ctx context.Context, grant string, why Reason) error {
	return a.change(ctx, grant, func(r *record) { r.Pending, r.PendingGen = why, r.Gen })
}

// Withdraw takes back an announcement (Announce).
func (a *Authority) Withdraw(ctx context.Context, grant string) error {
	return a.change(ctx, grant, func(r *record) { r.Pending, r.PendingGen = "", 0 })
}

// change raises grant's generation and applies fn, with compare-and-set on
// the record's revision.
func (a *Authority) change(ctx context.Context, grant string, fn func(*record)) error {
	for attempt := 0; ; attempt++ {
		r, rev, err := a.read(ctx, grant)
		if err != nil {
			return err
		}
		r.Grant = grant
		r.Gen = max(r.Gen+1, uint64(a.now().UnixNano()))
		fn(&r)
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		err = engine.Ask(ctx, func(ctx context.Context, _ int) error {
			if rev == 0 {
				_, err := a.kv.Create(ctx, grantKey(grant), b)
				return err
			}
			_, err := a.kv.Update(ctx, grantKey(grant), b, rev)
			return err
		})
		if err == nil {
			return nil
		}
		if !isRevisionConflict(err) || attempt >= 20 {
			return fmt.Errorf("session: ending an authority: %w", err)
		}
	}
}
