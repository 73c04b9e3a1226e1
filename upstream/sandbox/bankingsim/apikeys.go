package bankingsim

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
)

// apiKey is a corporation's API key. Only a hash of the private key is kept,
// so the key is shown once, when it is created.
type apiKey struct {
	ID, CorpID, Name string
	IsActive         bool
	CreatedAt        time.Time
	hash             string
}

// staffCorporation checks the staff-only rule, then the corporation.
func (s *Sim) staffCorporationLocked(w http.ResponseWriter, r *http.Request) *corporation {
	pr := principalOf(r)
	if !pr.isStaff() {
		forbidden(w, "", "API keys are managed by staff only")
		return nil
	}
	return s.scopedCorporationLocked(w, pr, chi.URLParam(r, "corporation_id"))
}

func (s *Sim) listAPIKeys(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.staffCorporationLocked(w, r)
	if c == nil {
		return
	}
	var keys []*apiKey
	for _, k := range s.apiKeys {
		if k.CorpID == c.ID {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if !keys[i].CreatedAt.Equal(keys[j].CreatedAt) {
			return keys[i].CreatedAt.Before(keys[j].CreatedAt)
		}
		return keys[i].ID < keys[j].ID
	})
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"id": k.ID, "name": k.Name})
	}
	writeJSON(w, http.StatusOK, map[string]any{"api_keys": out})
}

func (s *Sim) createAPIKey(w http.ResponseWriter, r *http.Request) {
	b, ok := decodeBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.staffCorporationLocked(w, r)
	if c == nil {
		return
	}
	var e errs
	b.unknown(&e, "", "name")
	name, _ := b.str(&e, "", "name")
	if strings.TrimSpace(name) == "" && !hasField(e, "name") {
		e.required("name")
	}
	maxLen(&e, "name", name, 255)
	if len(e) > 0 {
		badRequest(w, e...)
		return
	}
	secret := randomToken("sk_bank_")
	k := &apiKey{ID: uuid.NewString(), CorpID: c.ID, Name: name, IsActive: true, CreatedAt: s.now(), hash: keyHash(secret)}
	s.apiKeys[k.ID] = k
	writeJSON(w, http.StatusOK, map[string]any{"is_active": true, "id": k.ID, "private_key": secret, "name": k.Name})
}

// deleteAPIKey removes a key; tokens signed in with it stop working.
func (s *Sim) deleteAPIKey(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.staffCorporationLocked(w, r)
	if c == nil {
		return
	}
	k := s.apiKeys[chi.URLParam(r, "id")]
	if k == nil || k.CorpID != c.ID {
		notFound(w, "API key")
		return
	}
	delete(s.apiKeys, k.ID)
	writeJSON(w, http.StatusOK, map[string]any{"removed": true})
}
