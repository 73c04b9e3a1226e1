package bankingsim

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// Requisite types.
const (
	ReqSEPA        = "sepa"
	ReqCrossBorder = "cross-border"
	ReqUKLocal     = "uk-local"
)

// sandboxBIC is the BIC of each adapter's sandbox bank, given to automatic
// requisites and to manual adapter_a requisites that name none.
var sandboxBIC = map[string]string{AdapterA: "SANDLV22", AdapterB: "SANDGB2L", AdapterC: "SANDLT2X"}

var (
	bicRe          = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	ukAccountRe    = regexp.MustCompile(`^[0-9]{8}$`)
	ukSortCodeRe   = regexp.MustCompile(`^[0-9]{6}$`)
	crossBorderRe  = regexp.MustCompile(`^[A-Z0-9]{6,34}$`)
	walletNameMax  = 100
	createWalletIn = []string{"adapter", "ukLocal", "crossBorder", "sepa", "manual_or_automatic", "purpose", "currencies", "name"}
)

// reqIn is one requisites object of a request body ({number, code}).
type reqIn struct {
	number, code string
	present      bool
}

func readReq(e *errs, b body, key string) reqIn {
	o, ok := b.object(e, "", key)
	if !ok {
		return reqIn{}
	}
	o.unknown(e, key+".", "number", "code")
	n, _ := o.str(e, key+".", "number")
	c, _ := o.str(e, key+".", "code")
	return reqIn{number: strings.TrimSpace(n), code: strings.ToUpper(strings.TrimSpace(c)), present: true}
}

// checkSEPAReq validates a manual SEPA IBAN (real checksum, length and SEPA
// membership) and an optional BIC.
func checkSEPAReq(e *errs, prefix string, in reqIn, codeRequired bool) string {
	iban := normIBAN(in.number)
	if iban == "" {
		e.required(prefix + ".number")
	} else if why := checkIBAN(iban); why != "" {
		e.invalid(prefix+".number", why)
	} else if !sepaCountries[iban[:2]] {
		e.invalid(prefix+".number", "iban country "+iban[:2]+" is not in the SEPA area")
	}
	switch {
	case in.code == "" && codeRequired:
		e.required(prefix + ".code")
	case in.code != "" && !bicRe.MatchString(in.code):
		e.invalid(prefix+".code", "code must be a BIC")
	}
	return iban
}

// autoIBAN issues a fresh, valid sandbox IBAN: LV for adapter_a, GB for
// adapter_b, LT for adapter_c, numbered by a counter so that IBANs never
// repeat.
func (s *Sim) autoIBANLocked(adapter string) string {
	s.ibanSeq++
	switch adapter {
	case AdapterB:
		return makeIBAN("GB", fmt.Sprintf("SAND%014d", s.ibanSeq))
	case AdapterC:
		return makeIBAN("LT", fmt.Sprintf("70%014d", s.ibanSeq))
	}
	return makeIBAN("LV", fmt.Sprintf("SAND%013d", s.ibanSeq))
}

func (s *Sim) newRequisiteLocked(c *corporation, adapter, typ, number, code string) *requisite {
	now := s.now()
	q := &requisite{ID: uuid.NewString(), CorpID: c.ID, Number: number, Code: code, Type: typ, Adapter: adapter,
		CreatedAt: now, UpdatedAt: now}
	s.requisites[q.ID] = q
	return q
}

func (s *Sim) attachLocked(q *requisite, wl *wallet) {
	q.WalletID = wl.ID
	q.UpdatedAt = s.now()
	wl.RequisiteIDs = append(wl.RequisiteIDs, q.ID)
	wl.setUp = true
	wl.UpdatedAt = s.now()
}

// createWallet is staff only. adapter_a makes one EUR wallet (purpose CARD
// allowed) with automatic requisites, or manual ones from sepa.number;
// manual without sepa.number leaves the wallet not fully set up until
// requisites are attached. adapter_b (deprecated) makes one wallet, GBP
// when ukLocal is given and EUR otherwise, with the requisites given; none
// leaves it not set up. adapter_c makes one wallet per currency in
// currencies and answers them as an array.
func (s *Sim) createWallet(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	pr := principalOf(r)
	if !pr.isStaff() {
		forbidden(w, "", "wallet creation is for staff only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.scopedCorporationLocked(w, pr, chi.URLParam(r, "id"))
	if c == nil {
		return
	}
	var e errs
	b.unknown(&e, "", createWalletIn...)
	adapter, _ := b.str(&e, "", "adapter")
	switch adapter {
	case "":
		if !hasField(e, "adapter") {
			e.required("adapter")
		}
	case AdapterA, AdapterB, AdapterC:
	default:
		e.invalid("adapter", "adapter must be one of adapter_a, adapter_b, adapter_c")
	}
	name, hasName := b.str(&e, "", "name")
	if hasName {
		maxLen(&e, "name", name, walletNameMax)
	}
	mode, hasMode := b.str(&e, "", "manual_or_automatic")
	if hasMode && mode != "manual" && mode != "automatic" {
		e.invalid("manual_or_automatic", "manual_or_automatic must be manual or automatic")
	}
	purpose, hasPurpose := b.str(&e, "", "purpose")
	if hasPurpose && purpose != PurposeCard {
		e.invalid("purpose", "purpose must be CARD")
	}
	currencies, hasCurrencies := b.strings(&e, "", "currencies")
	uk, cross, sepa := readReq(&e, b, "ukLocal"), readReq(&e, b, "crossBorder"), readReq(&e, b, "sepa")
	onlyFor := func(field string, present bool, adapters ...string) {
		if present && adapter != "" && !contains(adapters, adapter) {
			e.invalid(field, field+" is for "+strings.Join(adapters, " or ")+" wallets only")
		}
	}
	onlyFor("manual_or_automatic", hasMode, AdapterA)
	onlyFor("purpose", hasPurpose, AdapterA)
	onlyFor("currencies", hasCurrencies, AdapterC)
	onlyFor("ukLocal", uk.present, AdapterB)
	onlyFor("crossBorder", cross.present, AdapterB)
	onlyFor("sepa", sepa.present, AdapterA, AdapterB)
	if adapter == AdapterA && sepa.present && sepa.code != "" {
		e.invalid("sepa.code", "sepa.code is for adapter_b wallets only")
	}
	if adapter == AdapterA && mode != "manual" && sepa.present {
		e.invalid("sepa", "sepa is for manual requisites only")
	}
	var iban string
	if sepa.present && (adapter == AdapterA || adapter == AdapterB) {
		iban = checkSEPAReq(&e, "sepa", sepa, adapter == AdapterB)
	}
	if uk.present {
		if !ukAccountRe.MatchString(uk.number) {
			e.invalid("ukLocal.number", "ukLocal.number must be an 8-digit account number")
		}
		if !ukSortCodeRe.MatchString(strings.ReplaceAll(uk.code, "-", "")) {
			e.invalid("ukLocal.code", "ukLocal.code must be a 6-digit sort code")
		}
	}
	if cross.present {
		if !crossBorderRe.MatchString(strings.ToUpper(strings.ReplaceAll(cross.number, " ", ""))) {
			e.invalid("crossBorder.number", "crossBorder.number must be an account number of 6 to 34 letters and digits")
		}
		if cross.code == "" {
			e.required("crossBorder.code")
		} else if !bicRe.MatchString(cross.code) {
			e.invalid("crossBorder.code", "crossBorder.code must be a BIC")
		}
	}
	if adapter == AdapterC {
		if !hasCurrencies || len(currencies) == 0 {
			if !hasField(e, "currencies") {
				e.required("currencies")
			}
		}
		seen := map[string]bool{}
		for _, cur := range currencies {
			if !contains(Currencies, cur) {
				e.invalid("currencies", "currencies holds USD, EUR, GBP, SEK, DKK or NOK")
				break
			}
			if seen[cur] {
				e.invalid("currencies", "currency "+cur+" is given twice")
				break
			}
			seen[cur] = true
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}

	now := s.now()
	by := s.actorLocked(pr)
	mk := func(currency string) *wallet {
		n := name
		if !hasName || strings.TrimSpace(n) == "" {
			n = currency + " wallet"
		}
		wl := &wallet{ID: uuid.NewString(), CorpID: c.ID, Name: n, Currency: currency, Adapter: adapter,
			Type: WalletReal, CreatedBy: by, CreatedByLoginID: pr.id, CreatedAt: now, UpdatedAt: now}
		s.wallets[wl.ID] = wl
		return wl
	}
	switch adapter {
	case AdapterA:
		wl := mk("EUR")
		if hasPurpose {
			p := PurposeCard
			wl.Purpose = &p
		}
		switch {
		case mode != "manual":
			s.attachLocked(s.newRequisiteLocked(c, AdapterA, ReqSEPA, s.autoIBANLocked(AdapterA), sandboxBIC[AdapterA]), wl)
		case iban != "":
			s.attachLocked(s.newRequisiteLocked(c, AdapterA, ReqSEPA, iban, sandboxBIC[AdapterA]), wl)
		}
		writeJSON(w, http.StatusOK, s.walletJSONLocked(wl))
	case AdapterB:
		currency := "EUR"
		if uk.present {
			currency = "GBP"
		}
		wl := mk(currency)
		if uk.present {
			s.attachLocked(s.newRequisiteLocked(c, AdapterB, ReqUKLocal, uk.number, strings.ReplaceAll(uk.code, "-", "")), wl)
		}
		if cross.present {
			s.attachLocked(s.newRequisiteLocked(c, AdapterB, ReqCrossBorder, strings.ToUpper(strings.ReplaceAll(cross.number, " ", "")), cross.code), wl)
		}
		if iban != "" {
			s.attachLocked(s.newRequisiteLocked(c, AdapterB, ReqSEPA, iban, sepa.code), wl)
		}
		writeJSON(w, http.StatusOK, s.walletJSONLocked(wl))
	case AdapterC:
		out := []any{}
		for _, cur := range currencies {
			wl := mk(cur)
			wl.setUp = true // adapter_c wallets need no requisites
			out = append(out, s.walletJSONLocked(wl))
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (s *Sim) requisitesCorporationLocked(w http.ResponseWriter, r *http.Request) *corporation {
	return s.scopedCorporationLocked(w, principalOf(r), chi.URLParam(r, "corporation_id"))
}

// listRequisites answers every requisite of the corporation, oldest first.
func (s *Sim) listRequisites(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.requisitesCorporationLocked(w, r)
	if c == nil {
		return
	}
	writeJSON(w, http.StatusOK, s.requisitesJSONLocked(c, func(q *requisite) bool { return true }))
}

func (s *Sim) requisitesJSONLocked(c *corporation, keep func(*requisite) bool) []any {
	var list []*requisite
	for _, q := range s.requisites {
		if q.CorpID == c.ID && keep(q) {
			list = append(list, q)
		}
	}
	sortRequisites(list)
	out := make([]any, 0, len(list))
	for _, q := range list {
		out = append(out, q.json(c.IdentityID))
	}
	return out
}

// readRequisitesBody reads adapter, manual_or_automatic and sepa, shared by
// create and attach.
func readRequisitesBody(e *errs, b body, adapters []string, extra ...string) (adapter, mode string, sepa reqIn) {
	b.unknown(e, "", append([]string{"adapter", "manual_or_automatic", "sepa"}, extra...)...)
	adapter, _ = b.str(e, "", "adapter")
	if adapter == "" {
		if !hasField(*e, "adapter") {
			e.required("adapter")
		}
	} else if !contains(adapters, adapter) {
		e.invalid("adapter", "adapter must be "+strings.Join(adapters, " or "))
	}
	mode, ok := b.str(e, "", "manual_or_automatic")
	if !ok {
		mode = "automatic"
	} else if mode != "manual" && mode != "automatic" {
		e.invalid("manual_or_automatic", "manual_or_automatic must be manual or automatic")
	}
	sepa = readReq(e, b, "sepa")
	if mode == "manual" {
		if !sepa.present {
			e.required("sepa.number")
			e.required("sepa.code")
		}
	} else if sepa.present {
		e.invalid("sepa", "sepa is for manual requisites only")
	}
	return adapter, mode, sepa
}

// createRequisites creates one unattached requisites record and answers it
// in an array (the spec's response is an array; we put the created record in it).
func (s *Sim) createRequisites(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.requisitesCorporationLocked(w, r)
	if c == nil {
		return
	}
	if refuseNotOnboardedLocked(w, c, "corporation_id") {
		return
	}
	var e errs
	adapter, mode, sepa := readRequisitesBody(&e, b, []string{AdapterA, AdapterB})
	iban := ""
	if mode == "manual" && sepa.present {
		iban = checkSEPAReq(&e, "sepa", sepa, true)
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	code := sepa.code
	if mode != "manual" {
		iban, code = s.autoIBANLocked(adapter), sandboxBIC[adapter]
	}
	q := s.newRequisiteLocked(c, adapter, ReqSEPA, iban, code)
	writeJSON(w, http.StatusOK, []any{q.json(c.IdentityID)})
}

// attachRequisites creates requisites (adapter_a only) and attaches them to
// a real adapter_a wallet of the corporation; it answers the wallet's
// requisites after the change. A wallet that was not fully set up is set
// up by it.
func (s *Sim) attachRequisites(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.requisitesCorporationLocked(w, r)
	if c == nil {
		return
	}
	if refuseNotOnboardedLocked(w, c, "wallet_id") {
		return
	}
	var e errs
	_, mode, sepa := readRequisitesBody(&e, b, []string{AdapterA}, "wallet_id")
	walletID, _ := b.str(&e, "", "wallet_id")
	if walletID == "" && !hasField(e, "wallet_id") {
		e.required("wallet_id")
	}
	iban := ""
	if mode == "manual" && sepa.present {
		iban = checkSEPAReq(&e, "sepa", sepa, true)
	}
	var wl *wallet
	if walletID != "" {
		wl = s.wallets[walletID]
		switch {
		case wl == nil || wl.CorpID != c.ID || wl.Type != WalletReal:
			e.invalid("wallet_id", "wallet not found in this corporation")
		case wl.Adapter != AdapterA:
			e.invalid("wallet_id", "requisites attach to adapter_a wallets only")
		}
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	code := sepa.code
	if mode != "manual" {
		iban, code = s.autoIBANLocked(AdapterA), sandboxBIC[AdapterA]
	}
	s.attachLocked(s.newRequisiteLocked(c, AdapterA, ReqSEPA, iban, code), wl)
	writeJSON(w, http.StatusOK, s.requisitesJSONLocked(c, func(q *requisite) bool { return q.WalletID == wl.ID }))
}

// deleteRequisites removes a requisites record and detaches it; a wallet of
// adapter_a or adapter_b left without requisites is no longer set up.
func (s *Sim) deleteRequisites(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.requisitesCorporationLocked(w, r)
	if c == nil {
		return
	}
	q := s.requisites[chi.URLParam(r, "id")]
	if q == nil || q.CorpID != c.ID {
		notFound(w, "wallet requisites")
		return
	}
	if refuseNotOnboardedLocked(w, c, "id") {
		return
	}
	delete(s.requisites, q.ID)
	if wl := s.wallets[q.WalletID]; wl != nil {
		kept := wl.RequisiteIDs[:0]
		for _, id := range wl.RequisiteIDs {
			if id != q.ID {
				kept = append(kept, id)
			}
		}
		wl.RequisiteIDs = kept
		if len(kept) == 0 && wl.Adapter != AdapterC {
			wl.setUp = false
		}
		wl.UpdatedAt = s.now()
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": q.ID})
}

// isSEPAEnabled answers whether the source wallet can pay the IBAN by SEPA:
// the IBAN must be valid for real (else 400, 10001 on iban) and of a SEPA
// country, and the source a EUR wallet the principal may see (else 404).
func (s *Sim) isSEPAEnabled(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var e errs
	src, raw := q.Get("source_id"), q.Get("iban")
	if src == "" {
		e.required("source_id")
	}
	iban := normIBAN(raw)
	if iban == "" {
		e.required("iban")
	} else if why := checkIBAN(iban); why != "" {
		e.invalid("iban", why)
	}
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	pr := principalOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	wl := s.wallets[src]
	if wl == nil || s.corporations[wl.CorpID] == nil || !s.seesCorporation(pr, s.corporations[wl.CorpID]) {
		notFound(w, "wallet")
		return
	}
	if refuseNotOnboardedLocked(w, s.corporations[wl.CorpID], "source_id") {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"is_sepa_enabled_iban": sepaCountries[iban[:2]] && wl.Currency == "EUR"})
}
