package app

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/fingraph/fingraph/gqlerr"
	"github.com/fingraph/fingraph/session"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// sandboxTrigger is POST /sandbox/trigger, registered only when the sandbox
// runs in-process: it fires a sandbox event (any name that `fingraph trigger
// --list` shows as a sandbox event; anything else is refused here, before
// the sandbox sees it), which reaches the gateway as a
// real webhook, so a page (the dashboard's button) can show a live event.
// The sandbox's control API itself stays on the sandbox's own loopback
// address and is never proxied: this route passes on one validated request,
// to the in-process sandbox's handler, with no network in between.
//
// It needs a session (the cookie's CSRF header is checked by the session
// middleware) and a JSON body, so a cross-site form cannot fire it.
func sandboxTrigger(sb http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if session.From(r.Context()) == nil {
			gqlerr.WriteHTTP(w, http.StatusUnauthorized, gqlerr.Unauthenticated, "sign in to fire sandbox events")
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			gqlerr.WriteHTTP(w, http.StatusUnsupportedMediaType, gqlerr.BadUserInput, "send a JSON body: {\"name\": \"IndividualActivated\"}")
			return
		}
		var in struct {
			Name string `json:"name"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&in); err != nil || !slices.Contains(paymentsim.TriggerNames(), in.Name) {
			gqlerr.WriteHTTP(w, http.StatusBadRequest, gqlerr.BadUserInput, "name must be one of the sandbox's trigger events: "+strings.Join(paymentsim.TriggerNames(), ", "))
			return
		}
		body, _ := json.Marshal(map[string]string{"name": in.Name})
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, "/_sandbox/trigger", bytes.NewReader(body))
		if err != nil {
			gqlerr.WriteHTTP(w, http.StatusInternalServerError, gqlerr.Internal, gqlerr.InternalMessage)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		sb.ServeHTTP(w, req)
	}
}
