package bankingsim

import (
	"net/http"
	"regexp"
	"strings"
)

// The banking OpenAPI document is built from routeTable and the schemas
// below, which follow the spec's field tables. Where the spec leaves a shape
// "not shown", the schema carries x-sandbox-choice: true and says what the
// sandbox answers; the choices are listed in docs/sandbox-banking.md
// ("Additions (not in the spec)").

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func arr(items map[string]any) map[string]any { return map[string]any{"type": "array", "items": items} }

// nullable marks a schema as also accepting null.
func nullable(s map[string]any) map[string]any {
	out := map[string]any{"nullable": true}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// choice marks a schema the spec does not show as the sandbox's own.
func choice(s map[string]any, why string) map[string]any {
	out := map[string]any{"x-sandbox-choice": true, "description": why}
	for k, v := range s {
		out[k] = v
	}
	return out
}

func enum(vals ...string) map[string]any {
	e := make([]any, len(vals))
	for i, v := range vals {
		e[i] = v
	}
	return map[string]any{"type": "string", "enum": e}
}

var (
	str     = map[string]any{"type": "string"}
	num     = map[string]any{"type": "number"}
	intg    = map[string]any{"type": "integer"}
	boolean = map[string]any{"type": "boolean"}
	nstr    = nullable(str)
	anyObj  = map[string]any{"type": "object", "additionalProperties": true}
	partial = choice(anyObj, "partial object; inner fields not shown in the spec")
)

// props builds a property map where every listed name has the same schema.
func props(s map[string]any, names ...string) map[string]any {
	m := map[string]any{}
	for _, n := range names {
		m[n] = s
	}
	return m
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func listOf(item map[string]any) map[string]any {
	return obj(map[string]any{"list": arr(item), "meta": ref("PaginationMeta")}, "list", "meta")
}

func bankingSchemas() map[string]any {
	actor := nullable(obj(map[string]any{"id": str, "type": enum("staff", "person", "api"), "full_name": str}))
	screening := obj(props(boolean, "politically_exposed", "sanctions_lists_entity", "relative_or_close_associate", "board_member"))
	personCommon := merge(
		props(str, "id", "first_name", "last_name", "phone", "country", "nationality", "email", "created_at", "type"),
		map[string]any{"deleted_at": nstr, "is_invitation_accepted": boolean, "is_ubo": boolean, "is_director": boolean,
			"account": partial, "identity": partial, "login": partial,
			"emails":       choice(map[string]any{"anyOf": []any{arr(anyObj), anyObj}}, "partial; the sandbox answers an array of {email, is_primary}"),
			"fingerprints": arr(anyObj), "ips": arr(anyObj), "roles": arr(map[string]any{})},
	)
	person := obj(merge(personCommon,
		props(str, "other_phone", "street", "city", "region", "post_code", "social_security_number", "person_login_id",
			"updated_at", "profile_level", "political_institution", "position_in_political_institution", "position", "primary_currency"),
		map[string]any{
			"date_of_birth": choice(nstr, "YYYY-MM-DD; null when not given (sandbox choice)"),
			"gender":        enum("male", "female", "transgender", "unknown"),
			"longitude":     nstr, "latitude": nstr, "score_adjustment": nullable(num), "email_domain_creation_date": nstr,
			"is_person_limits_disabled": boolean, "is_blocked": boolean, "is_2_fa_enabled": boolean,
			"is_politically_exposed": boolean, "is_tax_resident": boolean, "is_questionnaire_filled": boolean,
			"ownership": nullable(num), "created_by": actor, "updated_by": actor,
			"permissions":    map[string]any{"type": "object", "additionalProperties": boolean},
			"screening_info": obj(map[string]any{"is_person_under_review": boolean, "person_profile": screening}),
		}), "id")
	personItem := obj(merge(personCommon, map[string]any{
		"screening_info": obj(map[string]any{"status": choice(enum("under_review", "hit", "clear"),
			"values not shown; the sandbox's: under_review while reviewed, hit when a flag is set, clear otherwise"), "profile": screening}),
	}), "id")
	twoFA := obj(map[string]any{"truncated_phone_number": str, "two_fa_code": str,
		"challenge": obj(map[string]any{"two_fa": obj(map[string]any{"truncated_phone_number": str,
			"code_issued_timestamp": num, "code_expiration_sec": num, "challenge_id": str})})})
	corporation := obj(map[string]any{
		"id": str, "account_id": str, "name": str, "email": str, "address": nstr,
		"city": nstr, "region": nstr, "post_code": nstr, "country": str, "currency": enum("USD", "EUR", "GBP", "SEK", "DKK", "NOK"),
		"created_at": str, "onboarded_at": nstr, "deleted_at": nstr, "created_by": actor, "updated_by": actor,
		"identity":                obj(map[string]any{"id": str, "type": enum("corporate"), "is_kyc_verified": boolean, "is_questionnaire_filled": boolean}),
		"is_another_bank_account": boolean, "is_initial_application_filled": boolean, "is_onboarded": boolean,
		"kyc_data_provided_by_id": nstr, "kyc_data_provider": nullable(obj(props(str, "id", "first_name", "last_name"))),
		"questionnaire": choice(anyObj, "shape not shown; the sandbox answers {}"),
		"overall_screening_info": obj(map[string]any{"is_corporation_under_review": boolean,
			"corporation_profile": screening, "corporate_users_profile": screening}),
	}, "id")
	requisite := obj(map[string]any{"id": str, "number": str, "code": str, "type": choice(enum("sepa", "cross-border", "uk-local"), "the spec shows sepa and cross-border; uk-local is the sandbox's name for adapter_b ukLocal data"),
		"identity_id": str, "created_at": str, "updated_at": str}, "id")
	wallet := obj(map[string]any{
		"id": str, "amount": num, "type": enum("real", "pending"), "name": str, "currency": str,
		"payment_processor_adapter": str, "identity_id": str,
		"pending":           choice(nullable(anyObj), "shape not shown; the sandbox answers id, amount, currency, type, name, created_at, updated_at, or null before the first transaction"),
		"created_by":        actor,
		"bank_address":      choice(obj(props(str, "name", "street", "postCode", "city", "country")), "values not shown; the sandbox's banks"),
		"wallet_requisites": arr(obj(props(str, "id", "number", "code", "type"))),
		"purpose":           nstr, "created_by_login_id": str, "created_at": str, "updated_at": str,
		"real_wallet_id": choice(str, "sandbox addition on pending wallets"),
	}, "id", "amount", "currency")
	currencyAmounts := map[string]any{}
	for _, c := range []string{"dkk", "eur", "gbp", "nok", "sek", "usd"} {
		currencyAmounts["amount_"+c] = num
		currencyAmounts["charge_"+c] = num
	}
	transaction := obj(merge(currencyAmounts, map[string]any{
		"id": str, "exchange_rate": nullable(num), "charge_exchange_rate": nullable(num),
		"created_at": str, "updated_at": str, "deleted_at": nstr, "created_by": actor,
		"fingerprint": partial, "identity": partial, "meta": choice(anyObj, "shape not shown"),
		"status": choice(obj(map[string]any{"code": intg, "name": str, "error_code": intg}), "shape not shown; the sandbox answers the authorization code and name, and error_code when refused"),
		"review": choice(anyObj, "shape not shown"), "payment_processor_responses": choice(anyObj, "shape not shown"),
		"score": num, "score_range_id": str, "score_calc_logs": arr(map[string]any{}),
		"source_amount": num, "source_currency": str, "target_currency": str, "target_amount": num,
		"source_counterparty_id": str, "target_counterparty_id": str,
		"source_payment_processor": nullable(partial), "target_payment_processor": nullable(partial),
		"source_last_known_good_processor_reason_of_missing": nstr,
		"target_last_known_good_processor_reason_of_missing": nstr,
		"source": choice(nullable(anyObj), "shape not shown"), "target": choice(nullable(anyObj), "shape not shown"),
		"type": str,
	}), "id", "type")
	transactionCreated := map[string]any{"allOf": []any{ref("Transaction"), obj(merge(
		props(str, "identity_id", "source_payment_processor_id", "target_payment_processor_id", "payment_account_holder_id"),
		map[string]any{"fingerprint_id": nstr}))}}
	kyc := obj(map[string]any{"id": str, "name": str, "verifying_status": enum("noMark", "verified", "notVerified"),
		"type": enum("corporate"), "path": str, "expiration_at": nstr, "created_by_login_id": nstr, "updated_by_login_id": nstr,
		"identity_id": str, "created_at": str, "updated_at": str, "created_by": actor, "updated_by": actor}, "id")
	limitSet := obj(merge(props(nullable(num), "dailySuccessfulVelocity", "weeklySuccessfulVelocity", "monthlySuccessfulVelocity",
		"attemptVelocityPerHour", "minimumAmount", "maximumAmount", "dailyLimitAmount", "weeklyLimitAmount", "monthlyLimitAmount"),
		props(str, "_id", "createdAt", "updatedAt")))
	limit := obj(map[string]any{"id": str, "identityId": str, "paymentMethod": str, "transactionType": str,
		"limitSet": limitSet, "createdAt": str, "updatedAt": str}, "id")
	card := obj(map[string]any{
		"id": str, "status": enum("ACTIVE", "INACTIVE", "CANCELED", "LOST", "STOLEN", "PENDING"), "available_balance": num,
		"expiry": obj(props(str, "year", "month")), "display_name": str, "funding_source_id": str,
		"type": enum("VIRTUAL", "PHYSICAL"), "brand": enum("MASTERCARD", "VISA"), "region": enum("EUROPE"),
		"currency": enum("USD", "EUR", "GBP", "SEK", "DKK", "NOK"),
		"address": choice(nullable(obj(props(nstr, "country", "city", "street", "region", "post_code"))),
			"fields not given at issue are null (sandbox choice)"),
		"embossed_data": obj(props(str, "embossed_first_name", "embossed_last_name", "embossed_company_name")),
		"cardholder":    obj(props(str, "external_id", "id")), "pan": obj(props(str, "bin", "last_four")),
		"created_at": str, "modified_at": str,
	}, "id", "status")
	addr := obj(props(str, "street", "country", "post_code", "city", "region"))
	return map[string]any{
		"Errors": obj(map[string]any{"errors": arr(obj(map[string]any{"field": str, "message": str, "code": intg}, "message"))}, "errors"),
		"PaginationMeta": obj(map[string]any{"number_of_records": num, "limit": num, "has_more": boolean, "sort_by": str,
			"sort_type": enum("ASC", "DESC"),
			"offset":    choice(num, "sandbox addition: the offset of this page (meta[offset])")}),
		"Empty":              obj(map[string]any{}),
		"IDObject":           obj(map[string]any{"id": str}, "id"),
		"Token":              obj(map[string]any{"token": str}, "token"),
		"SignInResult":       map[string]any{"anyOf": []any{ref("Token"), ref("TwoFactorChallenge")}},
		"TwoFactorChallenge": choice(twoFA, "v2: truncated_phone_number and two_fa_code (empty: the code goes by SMS); v3: challenge.two_fa"),
		"SignIn": obj(map[string]any{"email": str, "password": str, "two_fa_code": str,
			"challenge": obj(map[string]any{"two_fa": obj(props(str, "challenge_id", "two_fa_code"))})}, "email", "password"),
		"PersonSignIn": obj(map[string]any{"email": str, "password": str, "two_fa_code": str,
			"fp_client_data": obj(map[string]any{"identifiers": obj(map[string]any{"id_fingerprint": num})}),
			"challenge":      obj(map[string]any{"two_fa": obj(props(str, "challenge_id", "two_fa_code"))})}, "email", "password"),
		"APISignIn":       obj(map[string]any{"apiKey": str}, "apiKey"),
		"ForgotPassword":  obj(map[string]any{"email": str}, "email"),
		"RecoverPassword": obj(map[string]any{"password": str, "token": str}, "password", "token"),
		"CorporationSignUp": obj(props(str, "companyName", "email", "firstName", "lastName", "phone", "country", "recaptcha"),
			"companyName", "email", "firstName", "lastName", "recaptcha"),
		"Feedback":          obj(props(str, "name", "email", "recaptcha", "subject", "feedback", "password"), "recaptcha"),
		"Person":            person,
		"PersonItem":        personItem,
		"PersonList":        listOf(ref("PersonItem")),
		"PersonOrTwoFactor": map[string]any{"anyOf": []any{ref("Person"), ref("TwoFactorChallenge")}},
		"PersonCreate": obj(merge(
			props(str, "first_name", "last_name", "email", "date_of_birth", "phone", "other_phone", "country", "nationality",
				"street", "city", "region", "post_code", "social_security_number", "account_id"),
			map[string]any{"gender": enum("unknown", "male", "female", "transgender"), "type": enum("employee", "consumer"),
				"is_ubo": boolean, "is_director": boolean, "roles": arr(str)}), "first_name", "last_name", "gender"),
		"PersonUpdate": obj(merge(
			props(str, "first_name", "last_name", "country", "nationality", "city", "region", "post_code", "street",
				"date_of_birth", "social_security_number", "position", "email", "phone", "other_phone", "political_institution",
				"position_in_political_institution", "password", "confirm_password", "current_password"),
			props(boolean, "is_politically_exposed", "is_tax_resident", "is_ubo", "is_director", "is_2_fa_enabled", "is_questionnaire_filled"),
			map[string]any{"ownership": num, "gender": enum("unknown", "male", "female", "transgender"), "roles": arr(str)})),
		"MeUpdate": obj(merge(
			props(str, "phone", "other_phone", "political_institution", "position_in_political_institution", "current_password",
				"password", "confirm_password", "two_fa_code"),
			props(boolean, "is_ubo", "is_director", "is_questionnaire_filled"),
			map[string]any{"gender": enum("unknown", "male", "female", "transgender"), "roles": arr(str),
				"challenge": obj(map[string]any{"two_fa": obj(props(str, "challenge_id", "two_fa_code"))})})),
		"Corporation":     corporation,
		"CorporationList": listOf(ref("Corporation")),
		"CorporationUpdate": obj(merge(props(str, "name", "email", "country", "currency", "city", "region", "post_code", "address"),
			props(boolean, "is_kyc_verified", "is_onboarded"))),
		"Settings":        obj(map[string]any{"id": str, "allowed_person_types": arr(enum("employee", "consumer")), "created_at": str, "updated_at": str}),
		"SettingsUpdate":  obj(map[string]any{"allowed_person_types": arr(enum("employee", "consumer"))}),
		"APIKeyList":      obj(map[string]any{"api_keys": arr(obj(props(str, "id", "name")))}, "api_keys"),
		"APIKeyCreate":    obj(map[string]any{"name": str}, "name"),
		"APIKey":          obj(map[string]any{"id": str, "name": str, "private_key": str, "is_active": boolean}, "id", "private_key"),
		"Removed":         obj(map[string]any{"removed": boolean}, "removed"),
		"KYCDocument":     kyc,
		"KYCDocumentList": arr(ref("KYCDocument")),
		"KYCUpload":       obj(map[string]any{"file": map[string]any{"type": "string", "format": "binary"}, "type": enum("corporate")}, "file", "type"),
		"KYCUpdate": obj(map[string]any{"name": str, "type": enum("corporate"), "expiration_at": str,
			"verifying_status": enum("verified", "notVerified", "noMark")}),
		"Card":            card,
		"CardList":        arr(ref("Card")),
		"CardCredentials": obj(props(str, "pan", "cvc2"), "pan", "cvc2"),
		"CardIssue": obj(map[string]any{
			"card": obj(map[string]any{"expiry": obj(props(str, "month", "year"), "month", "year"), "display_name": str,
				"funding_source_id": str, "type": enum("VIRTUAL"), "brand": enum("MASTERCARD"), "region": enum("EUROPE"), "currency": enum("EUR")},
				"expiry", "funding_source_id", "type", "brand", "region", "currency"),
			"company": obj(map[string]any{"external_id": str, "name": str, "email": str, "phone": str, "address": addr},
				"external_id", "name", "email", "address"),
			"cardholder": obj(map[string]any{"external_id": str, "first_name": str, "last_name": str, "type": enum("PRIMARY", "AUTHORISED"),
				"phone": str, "email": str, "address": addr}, "external_id", "first_name", "last_name", "type", "phone", "email"),
			"template_id": str,
		}, "card", "company", "cardholder"),
		"CardSimulation": obj(map[string]any{"card_id": str, "cardId": choice(str, "the spec's sample request spelling, also accepted"),
			"amount": num, "currency": enum("EUR")}, "amount", "currency"),
		"CardSimulationResult": obj(map[string]any{"authorised": boolean, "code": str}, "authorised", "code"),
		"Transaction":          transaction,
		"TransactionCreated":   transactionCreated,
		"TransactionList":      listOf(ref("Transaction")),
		"ConversionCreate": obj(map[string]any{"amount": num, "currency": enum("USD", "EUR", "GBP", "SEK", "NOK", "DKK"),
			"source": obj(map[string]any{"id": str}, "id"), "type": enum("convert"),
			"target": choice(obj(map[string]any{"id": str}), "sandbox addition: the target wallet; without it the corporation's wallet in currency")},
			"amount", "currency", "source", "type"),
		"Wallet":      wallet,
		"WalletArray": arr(ref("Wallet")),
		"WalletCreated": choice(map[string]any{"anyOf": []any{ref("Wallet"), arr(ref("Wallet"))}},
			"the created wallet; adapter_c with several currencies answers the array of created wallets"),
		"WalletCreate": obj(map[string]any{"adapter": enum("adapter_a", "adapter_b", "adapter_c"),
			"ukLocal": obj(props(str, "number", "code")), "crossBorder": obj(props(str, "number", "code")),
			"sepa": obj(props(str, "number", "code")), "manual_or_automatic": enum("manual", "automatic"),
			"purpose": str, "currencies": arr(str)}, "adapter"),
		"Requisites":      requisite,
		"RequisitesArray": arr(ref("Requisites")),
		"RequisitesCreate": obj(map[string]any{"adapter": enum("adapter_a", "adapter_b"), "manual_or_automatic": enum("manual", "automatic"),
			"sepa": obj(props(str, "number", "code"))}, "adapter"),
		"RequisitesAttach": obj(map[string]any{"adapter": enum("adapter_a"), "manual_or_automatic": enum("manual", "automatic"),
			"sepa": obj(props(str, "number", "code")), "wallet_id": str}, "adapter", "wallet_id"),
		"SEPAEnabled": obj(map[string]any{"is_sepa_enabled_iban": boolean}, "is_sepa_enabled_iban"),
		"Invoice": obj(map[string]any{"id": str, "is_paid": boolean, "type": enum("opening-fee", "monthly-service-fee"),
			"amount": num, "unpaid_amount": num, "identity_id": str, "currency": str, "invoice_payment_transaction_id": nstr,
			"repayments": arr(obj(map[string]any{"id": str, "amount": num, "type": str})), "created_at": str, "updated_at": str}, "id"),
		"InvoiceArray": arr(ref("Invoice")),
		"Limit":        limit,
		"LimitArray":   arr(ref("Limit")),
		"LimitUpdate": obj(map[string]any{"paymentMethod": str, "transactionType": str, "id": str, "corporationId": str,
			"limitSet": obj(props(nullable(num), "dailySuccessfulVelocity", "weeklySuccessfulVelocity", "monthlySuccessfulVelocity",
				"attemptVelocityPerHour", "minimumAmount", "maximumAmount", "dailyLimitAmount", "weeklyLimitAmount", "monthlyLimitAmount"))}),
		"ReportPath": obj(map[string]any{"report_path": str}, "report_path"),
	}
}

// queryParams describes each query parameter the routes take.
var queryParams = map[string]map[string]any{
	"meta[sort_by]":   {"schema": str, "description": "sort field, for example createdAt"},
	"meta[sort_type]": {"schema": enum("ASC", "DESC", "asc", "desc")},
	"meta[limit]":     {"schema": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxPageLimit}},
	"meta[offset]":    {"schema": map[string]any{"type": "integer", "minimum": 0}, "x-sandbox-addition": true, "description": "sandbox addition: skip this many records (the spec shows no paging beyond the first page)"},
	"corporation_id":  {"schema": str, "x-sandbox-addition": true, "description": "sandbox addition: staff filter by corporation"},
	"name":            {"schema": str, "description": "file name, informational"},
	"source_id":       {"schema": str, "required": true},
	"iban":            {"schema": str, "required": true},
	"walletId":        {"schema": str, "required": true},
	"wallets":         {"schema": arr(str), "style": "form", "explode": true, "description": "wallet ids (required: this or wallets[]); repeated, or comma-separated"},
	"wallets[]": {"schema": arr(str), "style": "form", "explode": true, "x-sandbox-choice": true,
		"description": "the bracketed spelling of wallets, as form-encoded arrays are often sent; the spec names the parameter wallets without showing how an array is encoded"},
	"from":           {"schema": map[string]any{"type": "string", "format": "date"}},
	"to":             {"schema": map[string]any{"type": "string", "format": "date"}},
	"timezone":       {"schema": str, "description": "tz database name, default UTC"},
	"corporationId":  {"schema": str},
	"introducerId":   {"schema": str, "required": true},
	"corporationIds": {"schema": arr(str), "style": "form", "explode": true},
	"corporationIds[]": {"schema": arr(str), "style": "form", "explode": true, "x-sandbox-choice": true,
		"description": "the bracketed spelling of corporationIds"},
}

// openAPIDoc builds the OpenAPI 3.0 document of the served routes.
func (s *Sim) openAPIDoc() map[string]any {
	paths := map[string]any{}
	errResp := map[string]any{"description": "errors: an array of {field, message, code}",
		"content": map[string]any{"application/json": map[string]any{"schema": ref("Errors")}}}
	tokenHeader := map[string]any{"x-access-token": map[string]any{"description": "the refreshed access token", "schema": str}}
	for _, rt := range s.served() {
		item, _ := paths[rt.pattern].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.pattern] = item
		}
		op := map[string]any{"operationId": rt.op, "summary": rt.summary}
		if rt.addition {
			op["x-sandbox-addition"] = true
			op["description"] = "Sandbox addition: the spec does not show this route (see docs/sandbox.md)."
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": str})
		}
		for _, q := range rt.query {
			if s.opts.Strict && queryParams[q]["x-sandbox-addition"] == true {
				continue
			}
			p := map[string]any{"name": q, "in": "query"}
			for k, v := range queryParams[q] {
				p[k] = v
			}
			params = append(params, p)
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.request != "" {
			ct := "application/json"
			if rt.request == "KYCUpload" {
				ct = "multipart/form-data"
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{ct: map[string]any{"schema": ref(rt.request)}}}
		}
		ok := map[string]any{"description": "success"}
		if rt.resp != "" {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": ref(rt.resp)}}
		} else {
			bin := map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
			ok["content"] = map[string]any{"application/pdf": bin, "text/csv": bin}
		}
		if rt.public {
			op["security"] = []any{}
		} else {
			ok["headers"] = tokenHeader
		}
		op["responses"] = map[string]any{"200": ok, "default": errResp}
		item[strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "fingraph sandbox: banking interface", "version": "3.2.0",
			"description": "Emulator of the banking interface. Routes are served under /v2 and /v3 (v3 changes only the two-factor challenge shape). " +
				"Schemas follow the spec's field tables; x-sandbox-choice marks what the spec leaves not shown, x-sandbox-addition what it does not have. See docs/sandbox.md."},
		"servers":  []any{map[string]any{"url": "/banking/v2"}, map[string]any{"url": "/banking/v3"}},
		"security": []any{map[string]any{"accessToken": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": bankingSchemas(),
			"securitySchemes": map[string]any{
				"accessToken": map[string]any{"type": "apiKey", "in": "header", "name": "x-access-token",
					"description": "JWT from a sign-in route; every answer carries the refreshed token in the same header"},
			},
		},
	}
}

func (s *Sim) openAPI(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.openAPIDoc())
}
