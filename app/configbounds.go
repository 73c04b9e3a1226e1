package app

import (
	"fmt"
	"time"

	"github.com/fingraph/fingraph/gqlhttp"
)

// Upper bounds of the settings that size what a client can make the
// gateway spend: a value past its bound refuses start-up with one line
// naming the setting. They are generous (the benchmarks' settings pass);
// they catch a typo such as 100000h, not a deliberate choice. Validate
// checks them on every Config, parsed or built by hand.

// Bounds of the durations and rates that keep a client's hold on the
// gateway short.
const (
	maxSessionTTL       = 30 * 24 * time.Hour
	maxReadTimeout      = 10 * time.Minute
	maxOperationTimeout = 10 * time.Minute
	maxPublicRateLimit  = 1_000_000
	maxWebhookRateLimit = 100_000
	maxSandboxGrace     = time.Hour
)

// maxPollInterval bounds the polling intervals: a poll further apart than
// this announces changes too late to be live.
const maxPollInterval = time.Hour

// maxBodyBytes bounds the bodyBytes limit: a JSON body is read whole before
// it is parsed, so its bound is memory per request.
const maxBodyBytes = 16 << 20

// limit is one FINGRAPH_LIMITS entry: its name, its field of
// gqlhttp.Limits (an *int or an *int64) and its upper bound.
type limit struct {
	name  string
	max   int64
	field func(*gqlhttp.Limits) any
}

// limitFields are the limits FINGRAPH_LIMITS may change, in the order -h
// and errors name them.
var limitFields = []limit{
	{"tokens", 100_000, func(l *gqlhttp.Limits) any { return &l.MaxTokens }},
	{"fields", 100_000, func(l *gqlhttp.Limits) any { return &l.MaxFields }},
	{"depth", 100, func(l *gqlhttp.Limits) any { return &l.MaxDepth }},
	{"introspectionDepth", 100, func(l *gqlhttp.Limits) any { return &l.MaxIntrospectionDepth }},
	{"aliases", 10_000, func(l *gqlhttp.Limits) any { return &l.MaxAliases }},
	{"rootFields", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxRootFields }},
	{"sameName", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxSameName }},
	{"directives", 10_000, func(l *gqlhttp.Limits) any { return &l.MaxDirectives }},
	{"complexity", 1_000_000, func(l *gqlhttp.Limits) any { return &l.MaxComplexity }},
	{"bodyBytes", maxBodyBytes, func(l *gqlhttp.Limits) any { return &l.MaxBodyBytes }},
	{"socketsPerAddress", 100_000, func(l *gqlhttp.Limits) any { return &l.MaxSocketsPerAddress }},
	{"anonymousPerAddress", 100_000, func(l *gqlhttp.Limits) any { return &l.MaxAnonymousPerAddress }},
	{"socketsPerSession", 100_000, func(l *gqlhttp.Limits) any { return &l.MaxSocketsPerSession }},
	{"operationsPerSocket", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxOperationsPerSocket }},
	{"uploadsPerAddress", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxUploadsPerAddress }},
	{"uploadsPerSession", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxUploadsPerSession }},
	{"uploadsPerTenant", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxUploadsPerTenant }},
	{"uploads", 1_000, func(l *gqlhttp.Limits) any { return &l.MaxUploads }},
	{"uploadSpoolBytes", 64 << 30, func(l *gqlhttp.Limits) any { return &l.MaxUploadSpoolBytes }},
}

// limitField is the entry of FINGRAPH_LIMITS called name.
func limitField(name string) (limit, bool) {
	for _, f := range limitFields {
		if f.name == name {
			return f, true
		}
	}
	return limit{}, false
}

// limitNames are the names FINGRAPH_LIMITS takes.
func limitNames() []string {
	names := make([]string, len(limitFields))
	for i, f := range limitFields {
		names[i] = f.name
	}
	return names
}

func (f limit) get(l *gqlhttp.Limits) int64 {
	switch p := f.field(l).(type) {
	case *int:
		return int64(*p)
	case *int64:
		return *p
	}
	panic("limit " + f.name + ": a field that is neither int nor int64")
}

func (f limit) set(l *gqlhttp.Limits, n int64) {
	switch p := f.field(l).(type) {
	case *int:
		*p = int(n)
	case *int64:
		*p = n
	default:
		panic("limit " + f.name + ": a field that is neither int nor int64")
	}
}

// checkValue refuses n for this limit when it is not positive or past its
// bound.
func (f limit) checkValue(n int64) error {
	switch {
	case n <= 0:
		return fmt.Errorf("%s=%d is not a positive number", f.name, n)
	case f.name == "bodyBytes" && n > f.max:
		return fmt.Errorf("bodyBytes=%d is more than %d (16 MiB)", n, f.max)
	case n > f.max:
		return fmt.Errorf("%s=%d is more than its upper bound %d", f.name, n, f.max)
	}
	return nil
}
