package trigger

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// trigger pointed at a program that is not the sandbox (another server on
// port 9090) names the setting to change, not that program's page.
func TestTriggerAtAnotherProgramNamesTheSetting(t *testing.T) {
	page := "<html><body><h1>404 Not Found</h1><p>nginx</p></body></html>"
	for _, code := range []int{http.StatusNotFound, http.StatusOK} {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(code)
			_, _ = io.WriteString(w, page)
		}))
		var out bytes.Buffer
		err := Run(context.Background(), []string{"-sandbox-url", other.URL, "OrderCreated"}, func(string) string { return "" }, &out)
		other.Close()
		if err == nil {
			t.Fatalf("%d: trigger succeeded against a program that is not the sandbox: %s", code, out.String())
		}
		if !strings.Contains(err.Error(), "-sandbox-url") {
			t.Errorf("%d: the error does not name -sandbox-url: %v", code, err)
		}
		if strings.Contains(err.Error()+out.String(), "nginx") {
			t.Errorf("%d: the other program's page was printed: %v %s", code, err, out.String())
		}
	}
}
