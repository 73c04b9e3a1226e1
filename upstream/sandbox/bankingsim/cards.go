package bankingsim

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// Card constants of the sandbox: the test BIN every PAN starts with, the
// one template id the spec allows, and the default spending limit.
const (
	// CardTestBIN starts every sandbox PAN: a Mastercard range, so PANs look
	// real, while no real card carries a sandbox number.
	CardTestBIN = "555544"
	// CardTemplateID is the one predefined template_id the sandbox accepts.
	CardTemplateID = "sandbox-virtual-template"
	// DefaultCardLimit is a new card's monthly spending limit in cents.
	DefaultCardLimit = 150000
)

// Card statuses of the spec.
var cardStatuses = []string{"ACTIVE", "INACTIVE", "CANCELED", "LOST", "STOLEN", "PENDING"}

// Card authorisation codes the sandbox answers (the spec's table).
const (
	AuthApproved          = "00"
	AuthPickUpCard        = "04"
	AuthInvalidAmount     = "13"
	AuthLostCard          = "41"
	AuthStolenCard        = "43"
	AuthInsufficientFunds = "51"
	AuthExpiredCard       = "54"
	AuthNotForCardholder  = "57"
	AuthExceedsLimit      = "61"
	AuthRestrictedCard    = "62"
)

// card is an issued card with its secrets and its spending.
type card struct {
	ID, CorpID, Status, DisplayName, FundingID string
	Type, Brand, Region, Currency              string
	ExpYear, ExpMonth                          string
	Address                                    map[string]any
	EmbossFirst, EmbossLast, EmbossCompany     string
	HolderExternalID, HolderID, HolderType     string
	CreatedAt, ModifiedAt                      time.Time
	CreatedBy                                  *actor
	Limit                                      int64
	pan, cvc                                   string
	txs                                        []*cardTx
}

// cardTx is a card transaction. Status is its authorization code (the zero
// value is APPROVED), AuthCode its card authorisation code ("" reads as
// 00), ErrorCode the transaction error code of a failed one. Booked ones
// come from the control API and never moved money.
type cardTx struct {
	ID, WalletID, Description string
	Amount                    int64
	At                        time.Time
	CreatedBy                 *actor
	Status                    int
	AuthCode                  string
	ErrorCode                 int
	booked                    bool
}

func (t *cardTx) authCode() string {
	if t.AuthCode == "" {
		return AuthApproved
	}
	return t.AuthCode
}

// cardAuthCodes are the card authorisation codes of the spec's table.
var cardAuthCodes = []string{"00", "01", "02", "03", "04", "05", "06", "07", "09", "12", "13", "14", "19", "21",
	"30", "41", "43", "51", "52", "53", "54", "55", "57", "58", "61", "62", "63", "65", "75", "77", "78", "84",
	"86", "91", "92", "93", "94", "96"}

// txErrorCodes are the transaction error codes of the spec's table.
var txErrorCodes = []int{101, 1300, 1301, 1310, 1318, 1320, 1322, 1330, 1352, 1360, 1385, 1392, 1393, 5100, 5101,
	5120, 5121, 5141, 5160, 5161, 5173, 5200, 5450, 5501, 5700, 5701, 5800, 5801, 5802, 5803, 5804, 5805, 6301,
	6303, 6400, 7710, 7721, 7730, 8000, 8040, 8100, 9110, 9500, 9505, 9542, 9544, 9600, 9610, 9620, 9621, 9630,
	9631, 9700, 9800, 9900, -100, -114, -115, -116, -117, -118, -119, -300, -420}

// spentInMonthLocked sums the approved amounts of now's calendar month
// (UTC): the limit is monthly.
func (c *card) spentInMonth(now time.Time) int64 {
	var n int64
	for _, t := range c.txs {
		if t.Status == StatusApproved && t.At.Year() == now.Year() && t.At.Month() == now.Month() {
			n += t.Amount
		}
	}
	return n
}

// expired reports whether the card's expiry month has ended.
func (c *card) expired(now time.Time) bool {
	y, _ := strconv.Atoi(c.ExpYear)
	m, _ := strconv.Atoi(c.ExpMonth)
	end := time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, time.UTC)
	return !now.Before(end)
}

func (s *Sim) cardJSONLocked(c *card) map[string]any {
	avail := c.Limit - c.spentInMonth(s.now())
	if w := s.wallets[c.FundingID]; w != nil && w.Amount < avail {
		avail = w.Amount
	}
	avail = max(avail, 0)
	return map[string]any{
		"id": c.ID, "status": c.Status, "available_balance": avail,
		"expiry":       map[string]any{"year": c.ExpYear, "month": c.ExpMonth},
		"display_name": c.DisplayName, "funding_source_id": c.FundingID, "type": c.Type, "brand": c.Brand,
		"region": c.Region, "currency": c.Currency, "address": c.Address,
		"embossed_data": map[string]any{"embossed_first_name": c.EmbossFirst, "embossed_last_name": c.EmbossLast,
			"embossed_company_name": c.EmbossCompany},
		"cardholder":  map[string]any{"external_id": c.HolderExternalID, "id": c.HolderID},
		"pan":         map[string]any{"bin": c.pan[:6], "last_four": c.pan[len(c.pan)-4:]},
		"created_at":  ts(c.CreatedAt),
		"modified_at": ts(c.ModifiedAt),
	}
}

func (c *card) txJSON(t *cardTx) map[string]any {
	return map[string]any{
		"id": t.ID, "type": "card-transaction", "amount_eur": t.Amount, "charge_eur": 0,
		"source_amount": t.Amount, "source_currency": c.Currency, "target_amount": t.Amount,
		"target_currency": c.Currency, "exchange_rate": nil, "charge_exchange_rate": nil,
		"status":     t.statusJSON(),
		"meta":       map[string]any{"card_id": c.ID, "authorisation_code": t.authCode(), "description": t.Description},
		"source":     map[string]any{"id": t.WalletID, "type": "wallet"},
		"target":     map[string]any{"name": t.Description, "type": "merchant"},
		"created_at": ts(t.At), "updated_at": ts(t.At), "deleted_at": nil, "created_by": t.CreatedBy,
		"score": 0,
	}
}

func (t *cardTx) statusJSON() map[string]any {
	st := map[string]any{"code": t.Status, "name": statusNames[t.Status]}
	if t.ErrorCode != 0 {
		st["error_code"] = t.ErrorCode
	}
	return st
}

// seesCardLocked: staff see every card, persons and API clients their
// corporation's; introducers no card.
func seesCard(p principal, c *card) bool {
	return p.isStaff() || (p.corpID != "" && c.CorpID == p.corpID)
}

func (s *Sim) scopedCardLocked(w http.ResponseWriter, p principal, id string) *card {
	if p.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot use cards")
		return nil
	}
	c := s.cards[id]
	if c == nil || !seesCard(p, c) {
		notFound(w, "card")
		return nil
	}
	return c
}

func (s *Sim) listCards(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	if pr.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot use cards")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var list []*card
	for _, c := range s.cards {
		if seesCard(pr, c) {
			list = append(list, c)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if c := list[i].CreatedAt.Compare(list[j].CreatedAt); c != 0 {
			return c < 0
		}
		return list[i].ID < list[j].ID
	})
	out := make([]any, 0, len(list))
	for _, c := range list {
		out = append(out, s.cardJSONLocked(c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) getCard(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.scopedCardLocked(w, principalOf(r), chi.URLParam(r, "id")); c != nil {
		writeJSON(w, http.StatusOK, s.cardJSONLocked(c))
	}
}

// getCardCredentials answers pan and cvc2 to persons and API clients of the
// card's corporation only: staff see the card, not its secrets.
func (s *Sim) getCardCredentials(w http.ResponseWriter, r *http.Request) {
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCardLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	if pr.corpID != c.CorpID {
		forbidden(w, "", "card credentials are shown to the card's corporation only")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"pan": c.pan, "cvc2": c.cvc})
}

var cardTxSorts = map[string]string{"createdAt": "created_at", "created_at": "created_at", "amount": "amount"}

func (s *Sim) listCardTransactions(w http.ResponseWriter, r *http.Request) {
	pg, e := s.parsePage(r, "createdAt", "DESC", cardTxSorts)
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCardLocked(w, principalOf(r), chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	items := append([]*cardTx(nil), c.txs...)
	less := func(a, b *cardTx) int {
		if pg.key == "amount" {
			return cmp.Compare(a.Amount, b.Amount)
		}
		return a.At.Compare(b.At)
	}
	writeJSON(w, http.StatusOK, paginate(pg, items, less, func(t *cardTx) string { return t.ID },
		func(t *cardTx) any { return c.txJSON(t) }))
}

var (
	monthRe = regexp.MustCompile(`^(0?[1-9]|1[0-2])$`)
	yearRe  = regexp.MustCompile(`^[0-9]{4}$`)
)

var (
	issueFields      = []string{"card", "company", "cardholder", "template_id"}
	issueCardFields  = []string{"expiry", "display_name", "funding_source_id", "type", "brand", "region", "currency"}
	issueCompFields  = []string{"external_id", "name", "email", "phone", "address"}
	issueHolderField = []string{"external_id", "first_name", "last_name", "type", "phone", "email", "address"}
	addressFields    = []string{"street", "country", "post_code", "city", "region"}
)

// reqStr reads a required string: absent or empty is 10002.
func reqStr(e *errs, b body, prefix, k string) string {
	v, ok := b.str(e, prefix, k)
	if !ok || strings.TrimSpace(v) == "" {
		if !hasField(*e, prefix+k) {
			e.required(prefix + k)
		}
		return ""
	}
	return strings.TrimSpace(v)
}

// reqObj reads a required object: absent is 10002.
func reqObj(e *errs, b body, prefix, k string) body {
	v, ok := b.object(e, prefix, k)
	if !ok {
		if !hasField(*e, prefix+k) {
			e.required(prefix + k)
		}
		return body{}
	}
	return v
}

// readCardAddress checks an address object; required lists the fields
// that must be there.
func readCardAddress(e *errs, b body, prefix string, required ...string) map[string]any {
	b.unknown(e, prefix, addressFields...)
	out := map[string]any{}
	for _, f := range addressFields {
		if contains(required, f) {
			out[f] = reqStr(e, b, prefix, f)
		} else if v, ok := b.str(e, prefix, f); ok {
			out[f] = v
		} else {
			out[f] = nil
		}
	}
	if v, _ := out["country"].(string); v != "" {
		checkCountry(e, prefix+"country", v)
	}
	for f, n := range map[string]int{"street": 64, "city": 64, "region": 100, "post_code": 10} {
		if v, _ := out[f].(string); v != "" {
			maxLen(e, prefix+f, v, n)
		}
	}
	return out
}

// issueCard applies every rule of the spec's issue table; each refusal
// names its field.
func (s *Sim) issueCard(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if pr.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot issue cards")
		return
	}
	var e errs
	b.unknown(&e, "", issueFields...)
	cb := reqObj(&e, b, "", "card")
	cb.unknown(&e, "card.", issueCardFields...)
	exp := reqObj(&e, cb, "card.", "expiry")
	exp.unknown(&e, "card.expiry.", "month", "year")
	month := reqStr(&e, exp, "card.expiry.", "month")
	if month != "" && !monthRe.MatchString(month) {
		e.invalid("card.expiry.month", "card.expiry.month must be 1 to 12")
	}
	year := reqStr(&e, exp, "card.expiry.", "year")
	if year != "" {
		if y, err := strconv.Atoi(year); err != nil || !yearRe.MatchString(year) || y <= 2018 {
			e.invalid("card.expiry.year", "card.expiry.year must be a year after 2018")
		}
	}
	display, _ := cb.str(&e, "card.", "display_name")
	maxLen(&e, "card.display_name", display, 255)
	funding := reqStr(&e, cb, "card.", "funding_source_id")
	typ := reqStr(&e, cb, "card.", "type")
	if typ != "" && typ != "VIRTUAL" {
		e.invalid("card.type", "card.type: only VIRTUAL is available")
	}
	brand := reqStr(&e, cb, "card.", "brand")
	if brand != "" && brand != "MASTERCARD" {
		e.invalid("card.brand", "card.brand: only MASTERCARD is available")
	}
	region := reqStr(&e, cb, "card.", "region")
	if region != "" && region != "EUROPE" {
		e.invalid("card.region", "card.region: only EUROPE is available")
	}
	currency := reqStr(&e, cb, "card.", "currency")
	if currency != "" && currency != "EUR" {
		e.invalid("card.currency", "card.currency: only EUR is available")
	}

	co := reqObj(&e, b, "", "company")
	co.unknown(&e, "company.", issueCompFields...)
	companyID := reqStr(&e, co, "company.", "external_id")
	companyName := reqStr(&e, co, "company.", "name")
	maxLen(&e, "company.name", companyName, 255)
	if v := reqStr(&e, co, "company.", "email"); v != "" {
		checkEmail(&e, "company.email", normEmail(v))
	}
	if v, ok := co.str(&e, "company.", "phone"); ok && v != "" {
		checkPhone(&e, "company.phone", v)
	}
	compAddr := readCardAddress(&e, reqObj(&e, co, "company.", "address"), "company.address.",
		"street", "country", "post_code", "city")

	ch := reqObj(&e, b, "", "cardholder")
	ch.unknown(&e, "cardholder.", issueHolderField...)
	holderID := reqStr(&e, ch, "cardholder.", "external_id")
	first := reqStr(&e, ch, "cardholder.", "first_name")
	maxLen(&e, "cardholder.first_name", first, 255)
	last := reqStr(&e, ch, "cardholder.", "last_name")
	maxLen(&e, "cardholder.last_name", last, 255)
	holderType := reqStr(&e, ch, "cardholder.", "type")
	if holderType != "" {
		oneOf(&e, "cardholder.type", holderType, "PRIMARY", "AUTHORISED")
	}
	if v := reqStr(&e, ch, "cardholder.", "phone"); v != "" {
		checkPhone(&e, "cardholder.phone", v)
	}
	if v := reqStr(&e, ch, "cardholder.", "email"); v != "" {
		checkEmail(&e, "cardholder.email", normEmail(v))
	}
	var holderAddr map[string]any
	if a, ok := ch.object(&e, "cardholder.", "address"); ok {
		holderAddr = readCardAddress(&e, a, "cardholder.address.", "street", "country", "post_code", "city")
	}
	if v, ok := b.str(&e, "", "template_id"); ok && v != CardTemplateID {
		e.invalid("template_id", "template_id must be the predefined template "+CardTemplateID)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// The rules that depend on state: the corporation, its wallet, its person.
	var corp *corporation
	if companyID != "" {
		corp = s.corporationByAccountLocked(companyID)
		if corp == nil || !(pr.isStaff() || corp.ID == pr.corpID) {
			e.invalid("company.external_id", "company.external_id is not your corporate account")
			corp = nil
		}
	}
	if corp != nil && funding != "" {
		wl := s.wallets[funding]
		switch {
		case wl == nil || wl.CorpID != corp.ID:
			e.invalid("card.funding_source_id", "card.funding_source_id is not a wallet of the corporation")
		case wl.Purpose == nil || *wl.Purpose != PurposeCard:
			e.invalid("card.funding_source_id", "card.funding_source_id: the wallet's purpose is not CARD")
		case currency != "" && wl.Currency != currency:
			e.invalid("card.funding_source_id", "card.funding_source_id: the wallet's currency is not the card's")
		case !corp.IsOnboarded:
			e.invalid("card.funding_source_id", "card.funding_source_id: the corporation is not onboarded, its wallets are disabled")
		}
	}
	if corp != nil && holderID != "" {
		p := s.persons[holderID]
		switch {
		case p == nil || p.CorpID != corp.ID:
			e.invalid("cardholder.external_id", "cardholder.external_id is not a person of the corporation")
		case p.DeletedAt != nil:
			e.invalid("cardholder.external_id", "cardholder.external_id is a blocked person")
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	now := s.now()
	addr := holderAddr
	if addr == nil {
		addr = compAddr
	}
	m, _ := strconv.Atoi(month)
	c := &card{ID: uuid.NewString(), CorpID: corp.ID, Status: "ACTIVE", DisplayName: display, FundingID: funding,
		Type: typ, Brand: brand, Region: region, Currency: currency, ExpYear: year, ExpMonth: strconv.Itoa(m),
		Address: addr, EmbossFirst: first, EmbossLast: last, EmbossCompany: companyName,
		HolderExternalID: holderID, HolderID: uuid.NewString(), HolderType: holderType,
		CreatedAt: now, ModifiedAt: now, CreatedBy: s.actorLocked(pr), Limit: DefaultCardLimit}
	c.pan, c.cvc = s.newPANLocked(randomDigits), randomDigits(3)
	s.cards[c.ID] = c
	writeJSON(w, http.StatusOK, map[string]any{"id": c.ID})
}

// randomDigits returns n uniformly random decimal digits.
func randomDigits(n int) string {
	var b strings.Builder
	for range n {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(err)
		}
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String()
}

// newPANLocked makes a 16-digit PAN under the test BIN with a valid Luhn
// check digit, unique among the sandbox's cards.
func (s *Sim) newPANLocked(digits func(int) string) string {
	for {
		body := CardTestBIN + digits(9)
		pan := body + luhnDigit(body)
		taken := false
		for _, c := range s.cards {
			if c.pan == pan {
				taken = true
				break
			}
		}
		if !taken {
			return pan
		}
	}
}

// luhnDigit is the check digit that makes body+digit pass the Luhn test.
func luhnDigit(body string) string {
	sum := 0
	for i := len(body) - 1; i >= 0; i-- {
		d := int(body[i] - '0')
		if (len(body)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return strconv.Itoa((10 - sum%10) % 10)
}

// simulateCard authorises or declines a card transaction. Declines answer
// 200 with authorised false and the code (Errors rule 6); only malformed
// requests are 400. An approved simulation debits the funding wallet and
// becomes a card transaction.
func (s *Sim) simulateCard(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if pr.kind == kindIntroducer {
		forbidden(w, "", "introducers cannot use cards")
		return
	}
	var e errs
	b.unknown(&e, "", "card_id", "cardId", "amount", "currency")
	field := "card_id"
	if !b.has("card_id") && b.has("cardId") {
		field = "cardId"
	}
	id := reqStr(&e, b, "", field)
	if id != "" {
		if _, err := uuid.Parse(id); err != nil {
			e.invalid(field, field+" must be a UUID")
		}
	}
	amount, hasAmount := b.number(&e, "", "amount")
	if !hasAmount && !hasField(e, "amount") {
		e.required("amount")
	} else if hasAmount && (amount != math.Trunc(amount) || math.Abs(amount) > 1e15) {
		e.invalid("amount", "amount must be a whole number of cents")
	}
	if cur := reqStr(&e, b, "", "currency"); cur != "" && cur != "EUR" {
		e.invalid("currency", "currency: only EUR is available")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cards[id]
	if c == nil || !seesCard(pr, c) {
		writeErrors(w, http.StatusNotFound, fieldErr(field, "card not found", 0))
		return
	}
	now := s.now()
	cents := int64(amount)
	decline := func(code string) {
		writeJSON(w, http.StatusOK, map[string]any{"authorised": false, "code": code})
	}
	switch c.Status {
	case "ACTIVE":
	case "LOST":
		decline(AuthLostCard)
		return
	case "STOLEN":
		decline(AuthStolenCard)
		return
	case "CANCELED":
		decline(AuthPickUpCard)
		return
	default: // INACTIVE, PENDING
		decline(AuthRestrictedCard)
		return
	}
	if c.expired(now) {
		decline(AuthExpiredCard)
		return
	}
	if p := s.persons[c.HolderExternalID]; p == nil || p.DeletedAt != nil {
		decline(AuthNotForCardholder)
		return
	}
	if cents <= 0 {
		decline(AuthInvalidAmount)
		return
	}
	wl := s.wallets[c.FundingID]
	if wl == nil || wl.Amount < cents {
		decline(AuthInsufficientFunds)
		return
	}
	if c.spentInMonth(now)+cents > c.Limit {
		decline(AuthExceedsLimit)
		return
	}
	t := &cardTx{ID: uuid.NewString(), WalletID: wl.ID, Description: "Sandbox card simulation",
		Amount: cents, At: now, CreatedBy: s.actorLocked(pr)}
	wl.postLocked(now, t.ID, "card-transaction", "Card *"+c.pan[len(c.pan)-4:]+" simulation", -cents)
	c.txs = append(c.txs, t)
	c.ModifiedAt = now
	writeJSON(w, http.StatusOK, map[string]any{"authorised": true, "code": AuthApproved})
}

func (s *Sim) controlCardStatus(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	st := reqStr(&e, b, "", "status")
	if st != "" {
		oneOf(&e, "status", st, cardStatuses...)
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.controlCardLocked(w, r)
	if c == nil {
		return
	}
	c.Status, c.ModifiedAt = st, s.now()
	writeJSON(w, http.StatusOK, s.cardJSONLocked(c))
}

func (s *Sim) controlCardLimit(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	n, has := b.number(&e, "", "limit")
	if !has || n < 0 || n != math.Trunc(n) {
		e.invalid("limit", "limit must be a whole number of cents from 0")
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.controlCardLocked(w, r)
	if c == nil {
		return
	}
	c.Limit, c.ModifiedAt = int64(n), s.now()
	writeJSON(w, http.StatusOK, s.cardJSONLocked(c))
}

// seedDigits derives "random" digits from a seed string, so that seeded
// cards have the same PAN and CVC on every start.
func seedDigits(seed string) func(int) string {
	return func(n int) string {
		sum := sha256.Sum256([]byte(seed))
		x := binary.BigEndian.Uint64(sum[:8])
		return fmt.Sprintf("%0*d", n, x%uint64(math.Pow10(n)))
	}
}

// Demo card ids, the same on every start.
var (
	DemoCardAnnaID = seedID("ca000000", 1)
	DemoCardDaceID = seedID("ca000000", 2)
	DemoKYCID      = seedID("d0c00000", 1)
)

// seedCardsLocked issues the demo corporation's two cards on its card
// wallet, with transactions that add up to the wallet's seeded card
// settlements (which already debited it), and one KYC document.
func (s *Sim) seedCardsLocked() {
	day := 24 * time.Hour
	anna := &actor{ID: AnnaID, Type: "person", FullName: "Anna Berzina"}
	mk := func(id, holder, first, last, display string, created time.Time, txs []int64, days []int) {
		c := &card{ID: id, CorpID: DemoCorporationID, Status: "ACTIVE", DisplayName: display,
			FundingID: DemoCardWalletID, Type: "VIRTUAL", Brand: "MASTERCARD", Region: "EUROPE", Currency: "EUR",
			ExpYear: "2030", ExpMonth: "12", EmbossFirst: first, EmbossLast: last, EmbossCompany: "Demo Trading SIA",
			Address: map[string]any{"street": "Brivibas iela 1", "country": "LV", "post_code": "LV-1010",
				"city": "Riga", "region": "Riga"},
			HolderExternalID: holder, HolderID: seedID("c1000000", len(s.cards)+1), HolderType: "PRIMARY",
			CreatedAt: created, ModifiedAt: created, CreatedBy: anna, Limit: DefaultCardLimit}
		c.pan = s.newPANLocked(seedDigits(id))
		c.cvc = seedDigits(id + "cvc")(3)
		for i, amt := range txs {
			c.txs = append(c.txs, &cardTx{ID: seedID("ca100000", len(s.cards)*10+i+1), WalletID: DemoCardWalletID,
				Description: []string{"Riga Office Supplies", "Baltic Air", "Cloud hosting", "Taxi", "Coffee"}[i%5],
				Amount:      amt, At: seedBase.Add(time.Duration(days[i])*day + 10*time.Hour), CreatedBy: anna})
		}
		s.cards[id] = c
	}
	mk(DemoCardAnnaID, AnnaID, "Anna", "Berzina", "Anna's travel card", seedBase.Add(4*day),
		[]int64{12000, 18500, 12000}, []int{8, 12, 17})
	mk(DemoCardDaceID, DaceID, "Dace", "Kalnina", "Office purchases", seedBase.Add(30*day),
		[]int64{3000, 4500}, []int{40, 44})

	at := seedBase.Add(2 * day)
	s.kyc[DemoKYCID] = &kycDocument{ID: DemoKYCID, CorpID: DemoCorporationID, Name: "registration-certificate.pdf",
		Status: KYCVerified, Type: "corporate", Format: "pdf",
		Path:           "kyc-documents/" + DemoCorporationID + "/" + DemoKYCID + ".pdf",
		CreatedByLogin: seedID("10000000", 1), UpdatedByLogin: StaffID, CreatedAt: at, UpdatedAt: at.Add(day),
		CreatedBy: anna, UpdatedBy: &actor{ID: StaffID, Type: "staff", FullName: "Sandra Staff"},
		data: []byte("%PDF-1.4\n% sandbox demo registration certificate\n%%EOF\n")}
}

// controlCardTransaction books a card transaction in any state the spec
// names, body {"amount", "status", "code", "error_code", "description"}:
// status is an authorization code (default 0 APPROVED for code 00, else 10
// DECLINED), code a card authorisation code (default 00), error_code a
// transaction error code. It is a record for clients to read and moves no
// money; simulateCard is the route that spends.
func (s *Sim) controlCardTransaction(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	var e errs
	b.unknown(&e, "", "amount", "status", "code", "error_code", "description")
	amountF, _ := b.number(&e, "", "amount")
	amount, amountOK := wholeCents(amountF)
	if !amountOK {
		e.invalid("amount", "amount must be a positive whole number of cents, at most "+itoa64(MaxAmount))
	}
	code := AuthApproved
	if v, ok := b.str(&e, "", "code"); ok {
		oneOf(&e, "code", v, cardAuthCodes...)
		code = v
	}
	status := StatusDeclined
	if code == AuthApproved {
		status = StatusApproved
	}
	if v, ok := b.number(&e, "", "status"); ok {
		status = int(v)
		if _, known := statusNames[status]; !known || v != math.Trunc(v) {
			e.invalid("status", "status must be an authorization code of the spec (0, 1, 10, 21, 22, 30, 40, 41, 42, 43)")
		}
	}
	errorCode := 0
	if v, ok := b.number(&e, "", "error_code"); ok {
		errorCode = int(v)
		if !slices.Contains(txErrorCodes, errorCode) || v != math.Trunc(v) {
			e.invalid("error_code", "error_code must be a transaction error code of the spec")
		}
	}
	desc, _ := b.str(&e, "", "description")
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	if desc == "" {
		desc = "Sandbox card transaction"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.controlCardLocked(w, r)
	if c == nil {
		return
	}
	now := s.now()
	t := &cardTx{ID: uuid.NewString(), WalletID: c.FundingID, Description: desc, Amount: amount, At: now,
		Status: status, AuthCode: code, ErrorCode: errorCode, booked: true}
	c.txs = append(c.txs, t)
	writeJSON(w, http.StatusOK, c.txJSON(t))
}

// controlReverseCardTransaction reverses an approved card transaction: it
// becomes REFUNDED (21) and, when it had debited the funding wallet, the
// amount goes back there.
func (s *Sim) controlReverseCardTransaction(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.controlCardLocked(w, r)
	if c == nil {
		return
	}
	var t *cardTx
	for _, x := range c.txs {
		if x.ID == chi.URLParam(r, "txId") {
			t = x
		}
	}
	if t == nil {
		notFound(w, "card transaction")
		return
	}
	if t.Status != StatusApproved {
		writeErrors(w, http.StatusConflict, fieldErr("", "transaction is "+statusNames[t.Status]+", not APPROVED", 0))
		return
	}
	now := s.now()
	if wl := s.wallets[t.WalletID]; wl != nil && !t.booked {
		wl.postLocked(now, t.ID, "card-transaction", "Card *"+c.pan[len(c.pan)-4:]+" reversal", t.Amount)
	}
	t.Status = StatusRefunded
	c.ModifiedAt = now
	writeJSON(w, http.StatusOK, c.txJSON(t))
}

// controlCardLocked is the card a control route names by its {id}, or nil
// once it has answered 404. s.mu must be held.
func (s *Sim) controlCardLocked(w http.ResponseWriter, r *http.Request) *card {
	c := s.cards[chi.URLParam(r, "id")]
	if c == nil {
		notFound(w, "card")
	}
	return c
}
