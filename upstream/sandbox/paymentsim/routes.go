package paymentsim

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// route is one payments route. Routes and the OpenAPI document are both
// built from routeTable, so the document lists exactly what is served.
type route struct {
	method  string
	pattern string
	keys    keyKind // 0: no key
	handler http.HandlerFunc
	summary string
	request string // component schema name of the body, "" for none
	status  int    // success status
	resp    string // component schema name of the success body, "" for none
}

// routeTable is the payments route table: every route of the emulator, one
// line each, with the key kinds it takes and what the OpenAPI document says
// of it. A new route is one added line.
func (s *Sim) routeTable() []route {
	const (
		pubPriv  = kindPublic | kindPrivate
		privCust = kindPrivate | kindCustomer
	)
	return []route{
		{"POST", "/v1/customer", pubPriv, s.postCustomer, "Create a customer, with stored methods and optional orders", "CustomerCreatable", 201, "Customer"},
		{"GET", "/v1/customer", kindPrivate, s.listCustomers, "List the merchant's customers", "", 200, "CustomerList"},
		{"GET", "/v1/customer/{customer_id}", privCust, s.getCustomer, "Read a customer (customer key: id `me`)", "", 200, "Customer"},
		{"PUT", "/v1/customer/{customer_id}/contact", privCust, s.putContact, "Replace a customer's contact", "Contact", 200, "Contact"},
		{"POST", "/v1/customer/{customer_id}/method", pubPriv, s.postMethod, "Add a stored card method, optionally with orders", "AddMethodRequest", 201, "AddMethodResult"},
		{"PUT", "/v1/customer/{customer_id}/methods", privCust, s.putMethods, "Reorder or drop stored methods", "PaymentMethodList", 200, "Customer"},
		{"POST", "/v1/order", privCust, s.postOrder, "Create an order (JSON with Accept: application/json, else a signed JWT)", "OrderCreatable", 201, "Order"},
		{"PATCH", "/v1/order", kindPrivate, s.patchOrders, "Apply capture/refund/cancel events to orders, all or nothing", "OrderEvents", 200, "OrderEvents"},
		{"GET", "/v1/order", privCust, s.listOrders, "List orders created between start and end (dates)", "", 200, "OrderList"},
		{"POST", "/v1/webhooks", kindAccess, s.postWebhook, "Register the company's one webhook", "WebhookCreatable", 201, "Webhook"},
		{"GET", "/v1/webhooks", kindAccess, s.listWebhooks, "List webhooks", "", 200, "WebhookList"},
		{"DELETE", "/v1/webhooks/{id}", kindAccess, s.deleteWebhook, "Delete a webhook", "", 204, ""},
		{"GET", "/v1/events", kindAccess, s.listEvents, "Sandbox addition: list events after a cursor, oldest first", "", 200, "EventPage"},
		{"GET", "/v1/events/{id}", kindAccess, s.getEvent, "Read an event", "", 200, "Event"},
		{"GET", "/v3/events/{id}", kindAccess, s.getEvent, "Read an event", "", 200, "Event"},
		{"GET", "/v3/pending_actions", kindAccess, s.getPendingActions, "Pending action of an event, or pending actions of an individual", "", 200, "PendingActions"},
		{"GET", "/v3/individuals", kindAccess, s.listIndividuals, "Sandbox addition: list individuals by status", "", 200, "IndividualList"},
		{"POST", "/individuals/{id}/onboard", kindAccess | kindPrivate, s.onboard, "Send an individual in onboarding_requested to the form again", "", 200, "Onboard"},
		{"GET", "/.well-known/jwks.json", 0, s.jwks, "Public key of signed order tokens", "", 200, "JWKS"},
		{"GET", "/openapi.json", 0, s.openAPI, "This document", "", 200, ""},
	}
}

// Routes registers the payments routes; the caller mounts them at /payments.
// The same table feeds the OpenAPI document, so the two cannot drift.
func (s *Sim) Routes(r chi.Router) {
	for _, rt := range s.served() {
		if rt.keys == 0 {
			r.Method(rt.method, rt.pattern, rt.handler)
			continue
		}
		r.With(s.authorize(rt.keys)).Method(rt.method, rt.pattern, rt.handler)
	}
}

// served is the route table less, in strict mode, the sandbox's additions.
// The document itself stays: it describes the routes, it is not one.
func (s *Sim) served() []route {
	if !s.opts.Strict {
		return s.routeTable()
	}
	var out []route
	for _, rt := range s.routeTable() {
		if key := rt.method + " " + rt.pattern; !additions[key] || key == "GET /openapi.json" {
			out = append(out, rt)
		}
	}
	return out
}

// Control registers the payments part of the control API under /_sandbox.
func (s *Sim) Control(r chi.Router) {
	r.Post("/customers/{id}/key", s.ctlCustomerKey)
	r.Get("/3ds/{order_id}", s.ctl3DSPage)
	r.Post("/3ds/{order_id}/complete", s.ctl3DSComplete)
	r.Get("/deliveries", s.ctlDeliveries)
	r.Post("/individuals", s.ctlCreateIndividual)
	r.Get("/individuals/{id}/form", s.ctlIndividualForm)
	r.Post("/individuals/{id}/submit", s.ctlSubmitIndividual)
	r.Post("/individuals/{id}/activate", s.ctlActivateIndividual)
	r.Post("/individuals/{id}/block", s.ctlBlockIndividual)
	r.Post("/pending_actions/{id}/complete", s.ctlCompletePendingAction)
	r.Post("/trigger", s.ctlTrigger)
	r.Get("/triggers", s.ctlTriggers)
}
