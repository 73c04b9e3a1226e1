package events

import "strings"

// Names of the banking-side events: the gateway's own announcements of the
// changes its mutations made (SourceGateway) and the poller's of the
// changes it found (SourceBanking). This is their one list; docs/events.md
// describes each. A change the gateway made and a poll then found carries
// one id (ChangeID), whichever name announced it first.
const (
	// Announced by the gateway's mutations.
	CardIssued               = "CardIssued"
	CardTransactionSimulated = "CardTransactionSimulated"
	KycDocumentStatusChanged = "KycDocumentStatusChanged"
	ConversionCreated        = "ConversionCreated"
	PersonBlocked            = "PersonBlocked"
	PersonRestored           = "PersonRestored"

	// Announced by the poller (and, for some, by the mutation that made
	// the change: WalletCreated, PersonCreated, LimitUpdated, LimitDeleted).
	WalletCreated            = "WalletCreated"
	WalletBalanceChanged     = "WalletBalanceChanged"
	WalletTransactionCreated = "WalletTransactionCreated"
	WalletTransactionUpdated = "WalletTransactionUpdated"
	CardCreated              = "CardCreated"
	CardUpdated              = "CardUpdated"
	CardTransactionCreated   = "CardTransactionCreated"
	CardTransactionUpdated   = "CardTransactionUpdated"
	KycDocumentCreated       = "KycDocumentCreated"
	KycDocumentUpdated       = "KycDocumentUpdated"
	LimitCreated             = "LimitCreated"
	LimitUpdated             = "LimitUpdated"
	LimitDeleted             = "LimitDeleted"
	InvoiceCreated           = "InvoiceCreated"
	InvoiceUpdated           = "InvoiceUpdated"
	PersonCreated            = "PersonCreated"
	PersonUpdated            = "PersonUpdated"
)

// bankingSideNames are the names above, for bounds that depend on how
// many subjects a corporation's events may be stored under.
var bankingSideNames = []string{
	CardIssued, CardTransactionSimulated, KycDocumentStatusChanged, ConversionCreated, PersonBlocked, PersonRestored,
	WalletCreated, WalletBalanceChanged, WalletTransactionCreated, WalletTransactionUpdated, CardCreated, CardUpdated,
	CardTransactionCreated, CardTransactionUpdated, KycDocumentCreated, KycDocumentUpdated, LimitCreated, LimitUpdated,
	LimitDeleted, InvoiceCreated, InvoiceUpdated, PersonCreated, PersonUpdated,
}

// HasPendingAction reports whether an upstream payments event of this name
// is tied to a pending action (GET /v3/pending_actions?event_id= answers
// one): the spec ties pending actions to PendingActionCreated and
// PendingActionCompleted only. The payments feed reads the action of those
// events alone, and so does Event.pendingActions: asking for another
// event's action would be an upstream call that can only answer "none".
func HasPendingAction(name string) bool { return strings.HasPrefix(name, "PendingAction") }
