package paymentsim

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"

	"github.com/golang-jwt/jwt/v5"
)

// writeOrder answers JSON when Accept includes application/json, otherwise
// the signed order token as application/jwt.
func (s *Sim) writeOrder(w http.ResponseWriter, r *http.Request, status int, o orderJSON) {
	if wantsJSON(r) {
		writeJSON(w, status, o)
		return
	}
	w.Header().Set("Content-Type", "application/jwt")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s.signOrder(o)))
}

// signOrder returns the order as an EdDSA-signed JWT, verifiable with the
// key published at /.well-known/jwks.json.
func (s *Sim) signOrder(o orderJSON) string {
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": Issuer, "iat": s.now().Unix(), "order": o})
	t.Header["kid"] = s.kid
	str, err := t.SignedString(s.signKey)
	if err != nil { // cannot happen with a valid ed25519 key
		s.log.Error("sign order", "err", err)
	}
	return str
}

func (s *Sim) jwks(w http.ResponseWriter, _ *http.Request) {
	pub := s.signKey.Public().(ed25519.PublicKey)
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
		"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(pub),
		"kid": s.kid, "alg": "EdDSA", "use": "sig",
	}}})
}
