package gqlerr

import (
	"encoding/json"
	"net/http"
)

// InternalMessage is all a client is shown of an internal error; the cause
// goes to the log.
const InternalMessage = "internal error"

// wireResponse is a GraphQL response that carries one error and no data,
// in the order gqlgen writes one: errors, then data.
type wireResponse struct {
	Errors []wireError `json:"errors"`
	Data   *struct{}   `json:"data"`
}

type wireError struct {
	Message    string     `json:"message"`
	Extensions wireExtras `json:"extensions"`
}

type wireExtras struct {
	Code Code `json:"code"`
}

// Body is the GraphQL response body of one error with code and msg and no
// data: {"errors":[{"message":msg,"extensions":{"code":code}}],"data":null}.
func Body(code Code, msg string) []byte {
	// Strings always encode (invalid UTF-8 is replaced), so there is no
	// error to handle.
	b, _ := json.Marshal(wireResponse{Errors: []wireError{{Message: msg, Extensions: wireExtras{Code: code}}}})
	return b
}

// WriteHTTP answers a request that never reached GraphQL execution (a
// refused session, an oversized upload, a download link, a sandbox route)
// with status and one error in the GraphQL response shape (Body), so that
// clients read extensions.code the same way on every route.
func WriteHTTP(w http.ResponseWriter, status int, code Code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(Body(code, msg))
}
