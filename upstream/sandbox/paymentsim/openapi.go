package paymentsim

import (
	"net/http"
	"regexp"
	"strings"
)

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

var (
	str    = map[string]any{"type": "string"}
	intg   = map[string]any{"type": "integer"}
	anyObj = map[string]any{"type": "object", "additionalProperties": true}
)

// choice marks a schema the spec leaves "not shown" as the sandbox's own
// (docs/sandbox-payments.md lists each).
func choice(s map[string]any, why string) map[string]any {
	out := map[string]any{"x-sandbox-choice": true, "description": why}
	for k, v := range s {
		out[k] = v
	}
	return out
}

func arr(items map[string]any) map[string]any { return map[string]any{"type": "array", "items": items} }

func schemas() map[string]any {
	method := obj(map[string]any{"type": str, "scheme": str, "iin": str, "last4": str, "expires": arr(intg), "acquirer": str, "created": str, "token": str})
	contact := obj(map[string]any{"type": str, "identity_number": str, "id": str, "name": str, "email": str, "phone": str,
		"address": obj(map[string]any{"street": str, "zip_code": str, "city": str, "country_code": str})}, "name", "email")
	methodCreatable := obj(map[string]any{"type": str, "card": str, "client": obj(map[string]any{"browser": anyObj}, "browser")}, "type", "card", "client")
	items := map[string]any{"oneOf": []any{intg, ref("Item"), arr(ref("Item"))}}
	orderCreatable := obj(map[string]any{"id": str, "number": str, "items": items, "currency": str, "charge": str,
		"customer": map[string]any{"oneOf": []any{str, ref("Contact")}}, "payment": anyObj}, "items", "currency")
	event := obj(map[string]any{"id": str, "name": str, "payload": anyObj, "created_at": str})
	webhook := obj(map[string]any{"id": str, "url": str, "created_at": str})
	individual := choice(obj(map[string]any{"id": str, "status": str, "created_at": str, "updated_at": str, "blocked_reason": str}),
		"the spec shows id and status; the other fields are the sandbox's")
	return map[string]any{
		"Error": choice(obj(map[string]any{"error": obj(map[string]any{"code": str, "message": str, "field": str, "order_id": str, "verification_url": str}, "code", "message")}),
			"the spec shows only that a failed order's error carries its id; the shape is the sandbox's"),
		"Item":              choice(obj(map[string]any{"name": str, "amount": intg, "quantity": intg}, "name", "amount"), "fields of an item object: not shown in the spec"),
		"Contact":           contact,
		"PaymentMethod":     method,
		"PaymentMethodList": arr(method),
		"MethodCreatable":   methodCreatable,
		"CustomerCreatable": obj(map[string]any{"number": str, "contact": contact, "method": arr(methodCreatable),
			"order": map[string]any{"anyOf": []any{ref("OrderCreatable"), arr(ref("OrderCreatable"))}}}, "number", "contact", "method"),
		"Customer": obj(map[string]any{"id": str, "number": str, "contact": contact, "method": arr(method), "status": str, "total": intg,
			"balance": choice(arr(obj(map[string]any{"currency": str, "amount": intg}, "currency", "amount")),
				"the spec shows an array without its elements' shape; the sandbox's elements are a currency and an amount in minor units"),
			"subscription": arr(obj(map[string]any{"id": str, "start": str, "items": items, "currency": str, "callback": str, "due": str})),
			"currency":     str, "order": map[string]any{"oneOf": []any{str, arr(str)}}}),
		"CustomerList": arr(ref("Customer")),
		"AddMethodRequest": map[string]any{"anyOf": []any{ref("MethodCreatable"),
			obj(map[string]any{"method": ref("MethodCreatable"), "order": map[string]any{"anyOf": []any{ref("OrderCreatable"), arr(ref("OrderCreatable"))}}}, "method")}},
		"AddMethodResult": map[string]any{"anyOf": []any{ref("PaymentMethod"),
			obj(map[string]any{"method": ref("PaymentMethod"), "order": map[string]any{"anyOf": []any{str, arr(str)}}}, "method", "order")}},
		"OrderCreatable": orderCreatable,
		"Order": obj(map[string]any{"id": str, "created": str, "number": str, "customer": map[string]any{"oneOf": []any{str, contact}}, "items": items,
			"currency": str, "charge": str, "payment": obj(map[string]any{"type": str, "scheme": str, "iin": str, "last4": str, "expires": arr(intg), "acquirer": str, "token": str}),
			"status": str, "amount": intg, "captured_amount": intg, "refunded_amount": intg}),
		"OrderList": map[string]any{"anyOf": []any{arr(ref("Order")), arr(str)},
			"description": "with Accept: application/json the orders; otherwise signed order tokens (sandbox choice)"},
		"OrderEvents":      arr(obj(map[string]any{"id": str, "event": arr(obj(map[string]any{"type": str, "amount": intg}, "type"))}, "id", "event")),
		"WebhookCreatable": obj(map[string]any{"url": str}, "url"),
		"Webhook":          webhook,
		"WebhookList":      arr(webhook),
		"Event":            event,
		"EventPage":        obj(map[string]any{"events": arr(event), "has_more": map[string]any{"type": "boolean"}}),
		"PendingActions": map[string]any{"oneOf": []any{ref("PendingAction"), arr(ref("PendingAction"))},
			"x-sandbox-choice": true, "description": "with event_id: the one pending action; with individual_id: the array (the spec shows no shape)"},
		"PendingAction": choice(obj(map[string]any{"id": str, "individual_id": str, "event_id": str, "type": str, "status": str,
			"created_at": str, "completed_at": map[string]any{"type": "string", "nullable": true}}), "fields of a pending action: not shown in the spec"),
		"IndividualList": arr(individual),
		"Onboard":        choice(obj(map[string]any{"id": str, "status": str, "form_url": str}), "response of onboard: not shown in the spec"),
		"JWKS":           obj(map[string]any{"keys": arr(anyObj)}),
	}
}

// operationIDs names each route's operation as a person would call it.
var operationIDs = map[string]string{
	"POST /v1/customer":                      "createCustomer",
	"GET /v1/customer":                       "listCustomers",
	"GET /v1/customer/{customer_id}":         "getCustomer",
	"PUT /v1/customer/{customer_id}/contact": "replaceCustomerContact",
	"POST /v1/customer/{customer_id}/method": "addPaymentMethod",
	"PUT /v1/customer/{customer_id}/methods": "reorderPaymentMethods",
	"POST /v1/order":                         "createOrder",
	"PATCH /v1/order":                        "applyOrderEvents",
	"GET /v1/order":                          "listOrders",
	"POST /v1/webhooks":                      "registerWebhook",
	"GET /v1/webhooks":                       "listWebhooks",
	"DELETE /v1/webhooks/{id}":               "deleteWebhook",
	"GET /v1/events":                         "listEvents",
	"GET /v1/events/{id}":                    "getEvent",
	"GET /v3/events/{id}":                    "getEventV3",
	"GET /v3/pending_actions":                "getPendingActions",
	"GET /v3/individuals":                    "listIndividuals",
	"POST /individuals/{id}/onboard":         "resendOnboarding",
	"GET /.well-known/jwks.json":             "getOrderTokenKeys",
	"GET /openapi.json":                      "getOpenAPIDocument",
}

// additions are the routes the spec does not show; the gateway can do
// without each (strict mode serves none of them).
var additions = map[string]bool{
	"GET /v1/events":             true,
	"GET /v3/individuals":        true,
	"GET /.well-known/jwks.json": true,
	"GET /openapi.json":          true,
}

func qp(name, desc string, schema map[string]any) map[string]any {
	return map[string]any{"name": name, "in": "query", "description": desc, "schema": schema}
}

// queryParams are the query parameters of each route.
var queryParams = map[string][]any{
	"GET /v1/order": {
		qp("start", "first creation day, YYYY-MM-DD (strongly recommended)", map[string]any{"type": "string", "format": "date"}),
		qp("end", "last creation day, YYYY-MM-DD (strongly recommended)", map[string]any{"type": "string", "format": "date"}),
	},
	"GET /v3/pending_actions": {
		qp("event_id", "the event the pending action is tied to; exactly one of event_id and individual_id", str),
		qp("individual_id", "the individual whose pending actions to list", str),
	},
	"GET /v1/events": {
		qp("after", "sandbox addition: id of the last event already seen", str),
		qp("limit", "sandbox addition: page size, 1 to 500 (default 100)", map[string]any{"type": "integer", "minimum": 1, "maximum": 500}),
	},
	"GET /v3/individuals": {
		qp("status", "sandbox addition: only individuals in this status", map[string]any{"type": "string",
			"enum": []any{"onboarding_requested", "onboarding_data_provided", "active", "blocked"}}),
	},
}

// openAPIDoc builds the OpenAPI 3.0 document of the served routes.
func (s *Sim) openAPIDoc() map[string]any {
	paths := map[string]any{}
	errResp := map[string]any{"description": "error", "content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
	for _, rt := range s.served() {
		item, _ := paths[rt.pattern].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.pattern] = item
		}
		key := rt.method + " " + rt.pattern
		op := map[string]any{"summary": rt.summary, "operationId": operationIDs[key]}
		if additions[key] {
			op["x-sandbox-addition"] = true
			op["description"] = "Sandbox addition: the spec does not show this route (see docs/sandbox.md)."
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": str})
		}
		params = append(params, queryParams[key]...)
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.request != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref(rt.request)}}}
		}
		ok := map[string]any{"description": "success"}
		if rt.resp != "" {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": ref(rt.resp)}}
			if rt.resp == "Order" {
				ok["content"].(map[string]any)["application/jwt"] = map[string]any{"schema": str}
			}
		}
		op["responses"] = map[string]any{itoa(rt.status): ok, "default": errResp}
		if rt.keys == 0 {
			op["security"] = []any{}
		} else {
			var sec []any
			for _, k := range []struct {
				k keyKind
				n string
			}{{kindPublic, "publicKey"}, {kindPrivate, "privateKey"}, {kindCustomer, "customerKey"}, {kindAccess, "accessToken"}} {
				if rt.keys&k.k != 0 {
					sec = append(sec, map[string]any{k.n: []any{}})
				}
			}
			op["security"] = sec
		}
		item[strings.ToLower(rt.method)] = op
	}
	bearer := func(desc string) map[string]any {
		return map[string]any{"type": "http", "scheme": "bearer", "description": desc}
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "fingraph sandbox: payments interface", "version": "1.0.0",
			"description": "Emulator of the payments interface; choices for what the spec leaves not shown are in docs/sandbox.md."},
		"servers": []any{map[string]any{"url": "/payments"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": schemas(),
			"securitySchemes": map[string]any{
				"publicKey":   bearer("public API key, demo " + PublicKey),
				"privateKey":  bearer("private API key, demo " + PrivateKey),
				"customerKey": bearer("customer API key (ck_...), demo " + DemoCustomerKey),
				"accessToken": bearer("access token, demo " + AccessToken),
			},
		},
	}
}

func (s *Sim) openAPI(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.openAPIDoc())
}
