// Package web serves the gateway's browser pages and its schema: the GraphiQL
// playground at /, the reference dashboard at /dashboard and the schema as
// SDL at /schema.graphql. The JavaScript is bundled ahead of time by
// web/build.mjs (npm run build) into files that are committed and embedded
// here, so `go run .` serves the pages with no Node and no network: no CDN
// is ever asked for a script.
package web

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/formatter"
)

//go:embed playground/index.html playground/dist dashboard/index.html dashboard/dashboard.js dashboard/dashboard.css dashboard/vendor
var files embed.FS

// Paths are the route patterns (chi's syntax) that Handler serves. The
// gateway registers these rather than mounting Handler at "/", so that every
// other path keeps the router's own 404 and 405 answers.
var Paths = []string{"/", "/dashboard", "/dashboard/*", "/playground/dist/*", "/schema.graphql"}

// Options configure Handler.
type Options struct {
	// PublishSchema serves /schema.graphql. It follows the gateway's
	// introspection setting: a schema hidden from __schema is not handed
	// out as a file either.
	PublishSchema bool
	// SandboxURL is the in-process sandbox's address, or "" with real
	// upstreams: the pages then say where its SMS and e-mail outboxes are
	// (sign-in codes and recovery links), so nobody has to read a log.
	SandboxURL string
}

// sandboxMark is where a page shows the sandbox's outboxes.
var sandboxMark = []byte("<!--sandbox-->")

// sandboxNote is the HTML that replaces sandboxMark in sandbox mode.
func sandboxNote(base string) []byte {
	if base == "" {
		return nil
	}
	b := html.EscapeString(strings.TrimRight(base, "/"))
	return []byte(`<p class="sandbox-note" data-testid="sandbox-note">Sandbox at <a href="` + b + `/_sandbox/stats">` + b +
		`</a>: SMS codes at <a href="` + b + `/_sandbox/sms" target="_blank" rel="noopener">/_sandbox/sms</a>, e-mails at <a href="` + b +
		`/_sandbox/email" target="_blank" rel="noopener">/_sandbox/email</a>.</p>`)
}

// Handler serves the pages and es's schema. Paths it does not know are 404.
func Handler(es graphql.ExecutableSchema, opts Options) http.Handler {
	static := http.FileServerFS(files)
	mux := http.NewServeMux()
	note := sandboxNote(opts.SandboxURL)
	mux.HandleFunc("GET /{$}", page("playground/index.html", note))
	mux.HandleFunc("GET /dashboard", page("dashboard/index.html", note))
	mux.HandleFunc("GET /dashboard/{$}", page("dashboard/index.html", note))
	for _, dir := range []string{"/playground/dist/", "/dashboard/"} {
		mux.Handle("GET "+dir, assets(static))
	}
	if opts.PublishSchema {
		sdl := SDL(es)
		mux.HandleFunc("GET /schema.graphql", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write(sdl)
		})
	}
	return mux
}

// SDL is es's schema as SDL, without the built-in scalars and directives,
// sorted by name so that the same schema gives the same bytes (codegen
// tools diff it).
func SDL(es graphql.ExecutableSchema) []byte {
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatSchema(es.Schema())
	return b.Bytes()
}

// securityHeaders keep the pages from being framed and from loading
// anything but their own files: the playground runs what a visitor types
// with the visitor's session, so it must not be embeddable elsewhere.
func securityHeaders(h http.Header) {
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:; "+
		"img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; frame-ancestors 'none'")
}

// page serves an embedded page, with note in place of its sandboxMark.
func page(name string, note []byte) http.HandlerFunc {
	body, err := fs.ReadFile(files, name)
	if err != nil {
		panic("web: missing embedded page " + name)
	}
	body = bytes.Replace(body, sandboxMark, note, 1)
	return func(w http.ResponseWriter, _ *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	}
}

// assets serves embedded files (never directory listings); the bundles
// have fixed names, so they are revalidated rather than cached for long.
func assets(static http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || path.Base(r.URL.Path) == "index.html" {
			http.NotFound(w, r)
			return
		}
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	})
}
