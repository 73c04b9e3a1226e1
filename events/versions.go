package events

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/fingraph/fingraph/upstream/banking"
)

// Versions name what an entity became, for events.ChangeID. The gateway's
// mutations and the poller derive them alike from the same upstream
// object, so that a change the gateway made and announced at once is not
// announced again when a poll finds it.
const (
	// Created is the version of an entity's first sighting.
	Created = "created"
	// Deleted is the version of an entity's removal.
	Deleted = "deleted"
)

// Digest is an opaque, short digest of the fields that make a version.
func Digest(fields ...any) string {
	h := sha256.New()
	for _, f := range fields {
		fmt.Fprintf(h, "%v\x00", f)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func Stamp(t banking.Timestamp) string { return t.UTC().Format(time.RFC3339Nano) }

// WalletVersion is a wallet's version: its balances as of its last update.
func WalletVersion(w *banking.Wallet) string {
	var pending int64
	if w.Pending != nil {
		pending = w.Pending.Amount
	}
	return Digest(w.Amount, pending, Stamp(w.UpdatedAt))
}

// TransactionWallet is the wallet a wallet transaction's events are about
// (a transaction is no node of its own): the wallet it debited when that is
// one of the corporation's (ours; nil takes the source as ours), as a
// conversion's announcement names its source wallet; else the wallet it
// credited (an incoming transfer).
func TransactionWallet(sourceWalletID, targetWalletID string, ours map[string]bool) string {
	if sourceWalletID != "" && (ours == nil || ours[sourceWalletID]) {
		return sourceWalletID
	}
	return targetWalletID
}

// TransactionCreatedVersion is the version, under its wallet's subject, of
// the first sighting of wallet transaction id: a conversion the gateway
// made and the poller's find of it share it.
func TransactionCreatedVersion(id string) string { return TransactionVersion(id, Created) }

// TransactionVersion is the version, under its wallet's subject, of wallet
// transaction id reaching v: the wallet's subject carries its own versions
// and every transaction's, kept apart by the transaction's id.
func TransactionVersion(id, v string) string { return "transaction " + id + " " + v }

// AnnouncesCreation reports whether a wallet's first sighting is announced
// (WalletCreated): a real wallet's only, as a pending wallet comes with its
// real one.
func AnnouncesCreation(w *banking.Wallet) bool { return w.Type == banking.WalletTypeReal }

func TransactionDigest(t *banking.Transaction) string {
	code, _ := t.StatusCode()
	return Digest(code, t.SourceAmount, t.TargetAmount, Stamp(t.UpdatedAt))
}

// KYCDocumentVersion is a KYC document's version.
func KYCDocumentVersion(d *banking.KYCDocument) string {
	exp := ""
	if d.ExpirationAt != nil {
		exp = *d.ExpirationAt
	}
	return Digest(d.VerifyingStatus, d.Name, exp, Stamp(d.UpdatedAt))
}

// LimitVersion is a corporation limit's version.
func LimitVersion(l *banking.Limit) string {
	s := l.LimitSet
	v := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return Digest(v(s.DailySuccessfulVelocity), v(s.WeeklySuccessfulVelocity), v(s.MonthlySuccessfulVelocity),
		v(s.AttemptVelocityPerHour), v(s.MinimumAmount), v(s.MaximumAmount), v(s.DailyLimitAmount),
		v(s.WeeklyLimitAmount), v(s.MonthlyLimitAmount), Stamp(l.UpdatedAt))
}

// PersonVersion is a person's version, from the fields a person read by id
// and a person in the listing both carry (the listing has no updated_at
// and no is_blocked), so that a mutation's announcement and a poll's of the
// same change share one id: a block is the time it was made (deleted_at).
func PersonVersion(p *banking.Person) string {
	blocked := "-"
	if p.DeletedAt != nil {
		blocked = Stamp(*p.DeletedAt)
	}
	return Digest(p.FirstName, p.LastName, p.Email, IsPersonBlocked(p), blocked)
}

// IsPersonBlocked reports whether a person is blocked, as both of its shapes
// say it: is_blocked where it is shown, deleted_at everywhere.
func IsPersonBlocked(p *banking.Person) bool { return p.IsBlocked || p.DeletedAt != nil }
