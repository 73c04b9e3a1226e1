package paymentsim

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// retrySchedule is the spec's resend schedule in RetryUnits: at most five
// resends, after 1, 2, 4, 8 and 16 units.
var retrySchedule = [...]int{1, 2, 4, 8, 16}

// slowdownUnits is how long, in RetryUnits, a 503 answer slows deliveries to
// its URL; while slowed, every attempt first waits one more RetryUnit.
const slowdownUnits = 30

// deliver posts {"id","name","createdAt"} to the webhook URL until it gets a
// 2xx, resending at most five times. It stops early when the sandbox closes
// or the webhook is deleted.
func (s *Sim) deliver(ev event, hookID, hookURL string) {
	defer s.wg.Done()
	body, _ := json.Marshal(map[string]string{"id": ev.ID, "name": ev.Name, "createdAt": ev.CreatedAt})
	unit := s.opts.RetryUnit
	for attempt := 1; attempt <= len(retrySchedule)+1; attempt++ {
		if attempt > 1 && !s.sleep(time.Duration(retrySchedule[attempt-2])*unit) {
			return
		}
		s.mu.Lock()
		active := s.webhook != nil && s.webhook.ID == hookID
		slowed := s.now().Before(s.slowUntil[hookURL])
		s.mu.Unlock()
		if !active {
			return
		}
		if slowed && !s.sleep(unit) {
			return
		}
		if !s.waitResumed() {
			return
		}
		status, errText := s.post(hookURL, body)
		s.mu.Lock()
		s.deliveries = append(s.deliveries, delivery{
			EventID: ev.ID, Name: ev.Name, URL: hookURL, Attempt: attempt, Status: status, Error: errText, At: ts(s.now()),
		})
		if status == http.StatusServiceUnavailable {
			s.slowUntil[hookURL] = s.now().Add(slowdownUnits * unit)
		}
		s.mu.Unlock()
		if status >= 200 && status < 300 {
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		s.log.Info("webhook delivery failed", "event", ev.ID, "attempt", attempt, "status", status, "err", errText)
	}
}

// PauseWebhooks holds every webhook delivery (first sends and resends)
// until ResumeWebhooks: the control API's fault for a receiver that must
// catch up by polling or a delivery backlog that arrives at once.
func (s *Sim) PauseWebhooks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resumed == nil {
		s.resumed = make(chan struct{})
	}
}

// ResumeWebhooks lets held deliveries go.
func (s *Sim) ResumeWebhooks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resumed != nil {
		close(s.resumed)
		s.resumed = nil
	}
}

// WebhooksPaused reports whether deliveries are held.
func (s *Sim) WebhooksPaused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumed != nil
}

// waitResumed blocks while deliveries are paused; false on Close.
func (s *Sim) waitResumed() bool {
	s.mu.Lock()
	ch := s.resumed
	s.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// sleep waits d or until Close; it reports whether to go on.
func (s *Sim) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

func (s *Sim) post(u string, body []byte) (int, string) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fingraph-sandbox-payments/1")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, resp.Status
}

// validWebhookURL accepts HTTPS, and plain HTTP to loopback hosts only (a
// sandbox choice, so a local gateway can receive webhooks).
func validWebhookURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

func (s *Sim) postWebhook(w http.ResponseWriter, r *http.Request) {
	raw, e := readJSON(r)
	if e != nil {
		writeErr(w, e)
		return
	}
	var in struct {
		URL *string `json:"url"`
	}
	if firstByte(raw) != '{' {
		writeErr(w, badRequest("", "body must be an object {url}"))
		return
	}
	if e := decodeInto(raw, &in, ""); e != nil {
		writeErr(w, e)
		return
	}
	if in.URL == nil || *in.URL == "" {
		writeErr(w, badRequest("url", "url is required"))
		return
	}
	if !validWebhookURL(*in.URL) {
		writeErr(w, errCode(http.StatusBadRequest, "invalid_webhook_url", "url", "the webhook URL must use HTTPS"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook != nil {
		writeErr(w, errCode(http.StatusConflict, "webhook_exists", "url", "a webhook is already registered; delete it first"))
		return
	}
	s.webhook = &webhook{ID: s.newID(), URL: *in.URL, CreatedAt: ts(s.now())}
	writeJSON(w, http.StatusCreated, s.webhook)
}

func (s *Sim) listWebhooks(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []webhook{}
	if s.webhook != nil {
		out = append(out, *s.webhook)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Sim) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook == nil || s.webhook.ID != chi.URLParam(r, "id") {
		writeErr(w, notFound("id", "webhook"))
		return
	}
	s.webhook = nil
	w.WriteHeader(http.StatusNoContent)
}

func (s *Sim) ctlDeliveries(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]delivery, 0, len(s.deliveries))
	for i := len(s.deliveries) - 1; i >= 0; i-- {
		out = append(out, s.deliveries[i])
	}
	writeJSON(w, http.StatusOK, out)
}
