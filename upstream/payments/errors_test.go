package payments_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/fingraph/fingraph/upstream/payments"
)

// Each typed check answers its own status only, through wrapping, and no
// error that is not an upstream answer.
func TestTypedChecksAnswerTheirStatus(t *testing.T) {
	checks := map[int]func(error) bool{
		http.StatusBadRequest:   payments.IsBadRequest,
		http.StatusUnauthorized: payments.IsUnauthorized,
		http.StatusForbidden:    payments.IsForbidden,
		http.StatusNotFound:     payments.IsNotFound,
		http.StatusConflict:     payments.IsConflict,
	}
	statuses := []int{400, 401, 403, 404, 409, 422, 500}
	for want, check := range checks {
		for _, status := range statuses {
			err := fmt.Errorf("wrapped: %w", &payments.ErrorResponse{StatusCode: status})
			if got := check(err); got != (status == want) {
				t.Errorf("check for %d on a %d answered %v", want, status, got)
			}
		}
		if check(nil) || check(errors.New("network")) {
			t.Errorf("check for %d answered true on an error that is no upstream answer", want)
		}
	}
}
