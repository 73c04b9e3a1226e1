package paymentsim

import (
	"fmt"
	"html"
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Sim) ctl3DSPage(w http.ResponseWriter, r *http.Request) {
	id := html.EscapeString(chi.URLParam(r, "order_id"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><title>Sandbox 3-D Secure</title><h1>3-D Secure for order %s</h1>
<form method="post" action="/_sandbox/3ds/%s/complete"><button>Authenticate</button></form>`, id, id)
}

// ctl3DSComplete marks 3-D Secure done for an order id handed out by a
// verification_required error.
func (s *Sim) ctl3DSComplete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := chi.URLParam(r, "order_id")
	p := s.pending[id]
	if p == nil {
		writeErr(w, notFound("order_id", "order awaiting verification"))
		return
	}
	if !p.ThreeDS {
		writeErr(w, errCode(http.StatusConflict, "invalid_transition", "order_id", "this order was not asked for 3-D Secure"))
		return
	}
	p.Verified = true
	writeJSON(w, http.StatusOK, map[string]any{"order_id": id, "verified": true})
}
