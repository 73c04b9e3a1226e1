package bankpoll

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/relay"
	"github.com/fingraph/fingraph/upstream/banking"
)

// pageSize is how many of the newest transactions a poll reads per wallet
// or card: more than arrive in one interval.
const pageSize = 100

// snapshot is what the last poll of a corporation saw: per listing, the
// digest of each entity in it. A listing absent from Lists was never read:
// its first reading is a baseline and announces nothing.
type snapshot struct {
	Lists map[string]map[string]string `json:"lists"`
}

// item is one entity as a listing shows it now.
type item struct {
	id, digest string
	// created builds the announcement of a first sighting, and updated
	// that of a change from the digest the last poll stored (was); nil
	// announces nothing.
	created func() change
	updated func(was string) change
}

// change is one announcement.
type change struct {
	name, subject, version string
	payload                map[string]any
}

// listing is what one upstream listing showed this poll.
type listing struct {
	key   string
	items []item
	// fresh marks a listing whose parent was first seen in this poll (a new
	// wallet's transactions): it is no baseline, everything in it is new.
	fresh bool
	// deleted builds the announcement of an entity gone from the listing;
	// nil for paged listings, where an entity drops off the page.
	deleted func(id string) change
}

// add lists an entity whose first sighting is announced as created and
// whose change as updated (under version d), both about subject.
func (l *listing) add(id, d, created, updated, subject string, payload func() map[string]any) {
	l.items = append(l.items, item{id: id, digest: d,
		created: func() change { return change{created, subject, events.Created, payload()} },
		updated: func(string) change { return change{updated, subject, d, payload()} },
	})
}

var errBreakerOpen = errors.New("the banking upstream's circuit breaker is open")

// pollOnce reads the corporation's listings with the credentials in cred,
// announces what changed since the snapshot, and stores the new snapshot.
func (p *Poller) pollOnce(ctx context.Context, corpID string, cred context.Context) error {
	if p.Banking.Breaker.BreakerState() == "open" {
		return errBreakerOpen
	}
	key := leaseKey(corpID)
	var old snapshot
	var rev uint64
	e, err := p.Snapshots.Get(ctx, key)
	switch {
	case err == nil:
		rev = e.Revision()
		if err := json.Unmarshal(e.Value(), &old); err != nil {
			return err
		}
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return err
	}
	cctx, cancel := callContext(ctx, cred)
	defer cancel()
	lists, kept, err := p.read(cctx, corpID, old)
	if err != nil {
		return err
	}
	changes, next := diff(old, lists, kept)
	p.Logger.Debug("bankpoll: polled", "listings", len(lists), "kept", len(kept), "changes", len(changes), "baseline", rev == 0)
	sent := map[string]bool{}
	for _, c := range changes {
		id := events.ChangeID(c.subject, c.version)
		if sent[id] {
			continue // one change seen in two listings (a transfer between two wallets)
		}
		sent[id] = true
		e, err := events.NewChange(events.SourceBanking, id, c.name, corpID, c.subject, c.payload, time.Now())
		if err != nil {
			return err
		}
		if err := p.Bus.Publish(ctx, e); err != nil {
			return err
		}
		p.stats.Changes.Add(1)
	}
	data, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = p.Snapshots.Create(ctx, key, data)
	} else {
		_, err = p.Snapshots.Update(ctx, key, data, rev)
	}
	if rev == 0 && isConflict(err) {
		// Another reader took the baseline meanwhile (a subscriber's
		// Baseline, another replica): this reading announced nothing
		// either, and the next poll compares with the one kept.
		err = nil
	}
	if err != nil {
		// Another holder saved meanwhile (a hand-over): the next poll
		// starts from its snapshot; what both announced shares its ids.
		return err
	}
	p.stats.Polls.Add(1)
	return nil
}

// diff compares the listings read with the snapshot: the changes to
// announce, and the next snapshot (the listings read, and those kept from
// the old one because they could not be read this time).
func diff(old snapshot, lists []listing, kept []string) ([]change, snapshot) {
	next := snapshot{Lists: map[string]map[string]string{}}
	for _, k := range kept {
		if m, ok := old.Lists[k]; ok {
			next.Lists[k] = m
		}
	}
	var out []change
	for _, l := range lists {
		prev, seen := old.Lists[l.key]
		now := make(map[string]string, len(l.items))
		for _, it := range l.items {
			now[it.id] = it.digest
			was, known := prev[it.id]
			switch {
			case !seen && !l.fresh:
				// Baseline: the listing's first reading.
			case !known:
				if it.created != nil {
					out = append(out, it.created())
				}
			case was != it.digest:
				if it.updated != nil {
					out = append(out, it.updated(was))
				}
			}
		}
		if seen && l.deleted != nil {
			gone := make([]string, 0)
			for id := range prev {
				if _, ok := now[id]; !ok {
					gone = append(gone, id)
				}
			}
			sort.Strings(gone)
			for _, id := range gone {
				out = append(out, l.deleted(id))
			}
		}
		next.Lists[l.key] = now
	}
	return out, next
}

// unreadable reports errors that mean this principal may not read a
// listing (or the upstream has none): the listing is skipped, not failed.
func unreadable(err error) bool {
	return banking.IsForbidden(err) || banking.IsNotFound(err)
}

// read reads every listing of the corporation. A listing this principal
// may not read is skipped and its part of the snapshot kept (kept); any
// other failure fails the poll, which then announces nothing and saves
// nothing.
func (p *Poller) read(ctx context.Context, corpID string, old snapshot) ([]listing, []string, error) {
	var lists []listing
	var kept []string
	skip := func(key string, err error) error {
		if unreadable(err) {
			kept = append(kept, key)
			return nil
		}
		return err
	}
	wallets, err := p.Banking.Wallets.List(ctx, corpID)
	if err != nil {
		if err := skip("wallets", err); err != nil {
			return nil, nil, err
		}
		// Not for this principal: the wallets' transactions are kept
		// as they were too.
		for key := range old.Lists {
			if strings.HasPrefix(key, "wallet-transactions:") {
				kept = append(kept, key)
			}
		}
	} else {
		lists = append(lists, walletListing(corpID, wallets))
	}
	ours := map[string]bool{}
	for _, w := range wallets {
		ours[w.ID] = true
	}
	_, walletsSeen := old.Lists["wallets"]
	for _, w := range wallets {
		if p.Banking.Transactions == nil {
			break // the upstream shows no transaction listing (the spec's)
		}
		key := "wallet-transactions:" + w.ID
		page, err := p.Banking.Transactions.ListByWallet(ctx, corpID, w.ID, &banking.ListOptions{Limit: pageSize})
		if err != nil {
			if err := skip(key, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		_, known := old.Lists["wallets"][w.ID]
		l := transactionListing(corpID, key, page.List, ours)
		l.fresh = walletsSeen && !known
		lists = append(lists, l)
	}

	cards, err := p.Banking.Cards.List(ctx)
	if err != nil {
		if err := skip("cards", err); err != nil {
			return nil, nil, err
		}
	} else {
		lists = append(lists, cardListing(cards))
		_, cardsSeen := old.Lists["cards"]
		for _, c := range cards {
			key := "card-transactions:" + c.ID
			page, err := p.Banking.Cards.Transactions(ctx, c.ID, &banking.ListOptions{Limit: pageSize})
			if err != nil {
				if err := skip(key, err); err != nil {
					return nil, nil, err
				}
				continue
			}
			_, known := old.Lists["cards"][c.ID]
			l := cardTransactionListing(key, c.ID, page.List)
			l.fresh = cardsSeen && !known
			lists = append(lists, l)
		}
	}

	if docs, err := p.Banking.KYC.List(ctx, corpID); err != nil {
		if err := skip("kyc-documents", err); err != nil {
			return nil, nil, err
		}
	} else {
		lists = append(lists, kycListing(corpID, docs))
	}
	if limits, err := p.Banking.Limits.List(ctx, corpID); err != nil {
		if err := skip("limits", err); err != nil {
			return nil, nil, err
		}
	} else {
		lists = append(lists, limitListing(corpID, limits))
	}
	if invoices, err := p.Banking.Invoices.List(ctx, corpID); err != nil {
		if err := skip("invoices", err); err != nil {
			return nil, nil, err
		}
	} else {
		lists = append(lists, invoiceListing(corpID, invoices))
	}
	if persons, err := p.Banking.Persons.List(ctx, &banking.ListOptions{Limit: pageSize}); err != nil {
		if err := skip("persons", err); err != nil {
			return nil, nil, err
		}
	} else {
		lists = append(lists, personListing(corpID, persons.List))
	}
	return lists, kept, nil
}

func walletListing(corpID string, wallets []*banking.Wallet) listing {
	l := listing{key: "wallets"}
	for _, w := range wallets {
		subject := relay.ID(relay.Wallet, corpID, w.ID)
		payload := func() map[string]any {
			m := map[string]any{"wallet_id": w.ID, "amount": w.Amount, "currency": w.Currency}
			if w.Pending != nil {
				m["pending_amount"] = w.Pending.Amount
			}
			return m
		}
		d := events.WalletVersion(w)
		it := item{id: w.ID, digest: d,
			updated: func(string) change { return change{events.WalletBalanceChanged, subject, d, payload()} },
		}
		if events.AnnouncesCreation(w) {
			it.created = func() change { return change{events.WalletCreated, subject, events.Created, payload()} }
		}
		l.items = append(l.items, it)
	}
	return l
}

func transactionListing(corpID, key string, txs []*banking.Transaction, ours map[string]bool) listing {
	l := listing{key: key}
	for _, t := range txs {
		walletID := events.TransactionWallet(t.SourceCounterpartyID, t.TargetCounterpartyID, ours)
		subject := relay.ID(relay.Wallet, corpID, walletID)
		payload := func() map[string]any {
			code, _ := t.StatusCode()
			return map[string]any{"wallet_id": walletID, "transaction_id": t.ID, "type": t.Type,
				"status": banking.TransactionStatusName(code), "source_wallet_id": t.SourceCounterpartyID,
				"target_wallet_id": t.TargetCounterpartyID, "amount": t.TargetAmount, "currency": t.TargetCurrency}
		}
		d := events.TransactionDigest(t)
		l.items = append(l.items, item{id: t.ID, digest: d,
			created: func() change {
				return change{events.WalletTransactionCreated, subject, events.TransactionCreatedVersion(t.ID), payload()}
			},
			updated: func(string) change {
				return change{events.WalletTransactionUpdated, subject, events.TransactionVersion(t.ID, d), payload()}
			},
		})
	}
	return l
}

func cardListing(cards []*banking.Card) listing {
	l := listing{key: "cards"}
	for _, c := range cards {
		subject := relay.ID(relay.Card, c.ID)
		payload := func() map[string]any {
			return map[string]any{"card_id": c.ID, "status": c.Status, "available_balance": c.AvailableBalance, "currency": c.Currency}
		}
		d := events.Digest(c.Status, c.AvailableBalance, c.DisplayName, events.Stamp(c.ModifiedAt))
		l.add(c.ID, d, events.CardCreated, events.CardUpdated, subject, payload)
	}
	return l
}

func cardTransactionListing(key, cardID string, txs []*banking.CardTransaction) listing {
	l := listing{key: key}
	for _, t := range txs {
		subject := relay.ID(relay.CardTransaction, cardID, t.ID)
		var status struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t.Status, &status)
		payload := func() map[string]any {
			return map[string]any{"card_id": cardID, "transaction_id": t.ID, "type": t.Type, "status": status.Name,
				"amount": t.SourceAmount, "currency": t.SourceCurrency}
		}
		d := events.Digest(string(t.Status), t.SourceAmount, t.TargetAmount, events.Stamp(t.UpdatedAt))
		l.add(t.ID, d, events.CardTransactionCreated, events.CardTransactionUpdated, subject, payload)
	}
	return l
}

func kycListing(corpID string, docs []*banking.KYCDocument) listing {
	l := listing{key: "kyc-documents"}
	for _, doc := range docs {
		subject := relay.ID(relay.KycDocument, corpID, doc.ID)
		payload := func() map[string]any {
			return map[string]any{"document_id": doc.ID, "status": doc.VerifyingStatus}
		}
		d := events.KYCDocumentVersion(doc)
		l.add(doc.ID, d, events.KycDocumentCreated, events.KycDocumentUpdated, subject, payload)
	}
	return l
}

func limitListing(corpID string, limits []*banking.Limit) listing {
	l := listing{key: "limits"}
	for _, lim := range limits {
		subject := relay.ID(relay.Limit, corpID, lim.ID)
		payload := func() map[string]any {
			return map[string]any{"limit_id": lim.ID, "payment_method": lim.PaymentMethod, "transaction_type": lim.TransactionType}
		}
		d := events.LimitVersion(lim)
		l.add(lim.ID, d, events.LimitCreated, events.LimitUpdated, subject, payload)
	}
	l.deleted = func(id string) change {
		return change{events.LimitDeleted, relay.ID(relay.Limit, corpID, id), events.Deleted, map[string]any{"limit_id": id}}
	}
	return l
}

func invoiceListing(corpID string, invoices []*banking.Invoice) listing {
	l := listing{key: "invoices"}
	for _, inv := range invoices {
		subject := relay.ID(relay.Invoice, corpID, inv.ID)
		payload := func() map[string]any {
			return map[string]any{"invoice_id": inv.ID, "is_paid": inv.IsPaid, "unpaid_amount": inv.UnpaidAmount, "currency": inv.Currency}
		}
		d := events.Digest(inv.IsPaid, inv.Amount, inv.UnpaidAmount, len(inv.Repayments), events.Stamp(inv.UpdatedAt))
		l.add(inv.ID, d, events.InvoiceCreated, events.InvoiceUpdated, subject, payload)
	}
	return l
}

func personListing(corpID string, persons []*banking.Person) listing {
	l := listing{key: "persons"}
	for _, ps := range persons {
		if c := ps.Account.Corporation(); c != "" && c != corpID {
			continue
		}
		subject := relay.ID(relay.Person, ps.ID)
		blocked := events.IsPersonBlocked(ps)
		payload := func() map[string]any {
			return map[string]any{"person_id": ps.ID, "is_blocked": blocked}
		}
		d := events.PersonVersion(ps)
		l.items = append(l.items, item{id: ps.ID, digest: personDigest(d, blocked),
			created: func() change { return change{events.PersonCreated, subject, events.Created, payload()} },
			updated: func(was string) change {
				return change{personChange(was, blocked), subject, d, payload()}
			},
		})
	}
	return l
}

// blockedMark ends the stored digest of a blocked person, so that the next
// poll knows the state a change left.
const blockedMark = "+blocked"

func personDigest(version string, blocked bool) string {
	if blocked {
		return version + blockedMark
	}
	return version
}

// personChange names a person's change as the gateway's own mutations do:
// a block or a restore by its name, anything else PersonUpdated. Both
// announcers of one change then agree on its name as on its identity, so a
// subscription filtered by name gets it whichever announced it first.
func personChange(was string, blocked bool) string {
	switch wasBlocked := strings.HasSuffix(was, blockedMark); {
	case blocked && !wasBlocked:
		return events.PersonBlocked
	case !blocked && wasBlocked:
		return events.PersonRestored
	}
	return events.PersonUpdated
}
