package bankingsim

import "net/http"

// The spec's Corporation table: "is_onboarded: when false, all operations
// with its wallets are disabled". The sandbox refuses, for a corporation
// not onboarded, every route that operates on its wallets: conversions
// (20003, transactions.go), card issue (10001 on card.funding_source_id,
// cards.go), and here requisites (create, attach, delete), the SEPA lookup
// and statements, each with 400 and code 10001 on the field that names the
// wallet or corporation. Reading the corporation's wallets stays possible,
// so an onboarding screen can show them, and staff may still create wallets
// while setting the corporation up (docs/sandbox-wallets.md).

// msgNotOnboarded is the message of every such refusal.
const msgNotOnboarded = "the corporation is not onboarded: operations with its wallets are disabled"

// refuseNotOnboardedLocked answers 400 with code 10001 on field and reports
// true when c is not onboarded.
func refuseNotOnboardedLocked(w http.ResponseWriter, c *corporation, field string) bool {
	if c == nil || c.IsOnboarded {
		return false
	}
	badRequest(w, fieldErr(field, field+": "+msgNotOnboarded, CodeInvalid))
	return true
}
