package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/fingraph/fingraph/gqlhttp"
	"github.com/fingraph/fingraph/upstream/sandbox"
)

// The typed values of the settings. Each implements flag.Value over one
// Config field, so that a flag and its environment variable are decoded by
// the same Set; each also checks the field as it stands (check), so that
// Validate refuses a Config built by hand exactly as ParseConfig refuses a
// bad flag. Their errors say what was wrong and what is accepted; the
// setting they belong to prefixes the variable's name (setting.Set).

// checker is a value that can tell whether its field, however it was set,
// is one the gateway accepts.
type checker interface{ check() error }

// typeNamer names a value's kind in -h ("-session-ttl duration").
type typeNamer interface{ typeName() string }

// Mode says where the gateway's upstreams are. ParseConfig decides it once,
// from FINGRAPH_MODE or else from whether upstream URLs were given; nothing
// infers it again later.
type Mode int

const (
	// ModeSandbox runs the sandbox in-process with demo data and points the
	// gateway at it: what `go run .` does on a fresh machine.
	ModeSandbox Mode = iota + 1
	// ModeUpstreams talks to real upstreams at PaymentsURL and BankingURL.
	ModeUpstreams
)

var modeNames = map[Mode]string{ModeSandbox: "sandbox", ModeUpstreams: "upstreams"}

// String is the mode as FINGRAPH_MODE names it; "" when not decided.
func (m Mode) String() string { return modeNames[m] }

// Set takes "sandbox" or "upstreams".
func (m *Mode) Set(s string) error {
	for mode, name := range modeNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			*m = mode
			return nil
		}
	}
	return fmt.Errorf("%q is not sandbox or upstreams", s)
}

func (m *Mode) check() error {
	if _, ok := modeNames[*m]; !ok {
		return errors.New("no mode: ParseConfig decides it from the upstream URLs; a Config built by hand sets ModeSandbox or ModeUpstreams")
	}
	return nil
}

func (*Mode) typeName() string { return "mode" }

// TrustedProxies are the proxies whose forwarding headers name the client:
// addresses and CIDRs, comma-separated in a setting. An address is its own
// one-address prefix.
type TrustedProxies []netip.Prefix

// String lists the prefixes comma-separated, as Set takes them.
func (p TrustedProxies) String() string {
	parts := make([]string, len(p))
	for i, pfx := range p {
		parts[i] = pfx.String()
	}
	return strings.Join(parts, ",")
}

// Set replaces the list with the comma-separated addresses and CIDRs of s.
func (p *TrustedProxies) Set(s string) error {
	var out TrustedProxies
	for _, one := range strings.Split(s, ",") {
		if one = strings.TrimSpace(one); one == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(one)
		if err != nil {
			addr, aerr := netip.ParseAddr(one)
			if aerr != nil {
				return fmt.Errorf("%q is not an address or a CIDR such as 10.0.0.0/8", one)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	*p = out
	return nil
}

func (p *TrustedProxies) check() error {
	for _, pfx := range *p {
		if !pfx.IsValid() {
			return fmt.Errorf("%q is not an address or a CIDR such as 10.0.0.0/8", pfx.String())
		}
	}
	return nil
}

func (*TrustedProxies) typeName() string { return "list" }

// SandboxFaults are faults a sandbox starts with, as its control API takes
// them (POST /_sandbox/faults): a JSON array in a setting.
type SandboxFaults []sandbox.Fault

// String is the faults as a JSON array, or "" for none.
func (f SandboxFaults) String() string {
	if len(f) == 0 {
		return ""
	}
	b, _ := json.Marshal([]sandbox.Fault(f))
	return string(b)
}

// Set replaces the faults with the JSON array s ("" for none); an unknown
// field is refused, as is a fault the sandbox would refuse.
func (f *SandboxFaults) Set(s string) error {
	var out SandboxFaults
	if strings.TrimSpace(s) == "" {
		*f = nil
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return fmt.Errorf("not a JSON array of faults: %v", err)
	}
	if err := out.check(); err != nil {
		return err
	}
	*f = out
	return nil
}

func (f *SandboxFaults) check() error {
	for _, one := range *f {
		if err := one.Validate(); err != nil {
			return fmt.Errorf("%q: %w", one.Route, err)
		}
	}
	return nil
}

func (*SandboxFaults) typeName() string { return "json" }

// limitsValue is FINGRAPH_LIMITS over gqlhttp.Limits: "name=value" pairs
// changing gqlhttp.DefaultLimits. Each Set starts again from the defaults,
// so that the flag replaces the variable as every other flag does.
type limitsValue struct{ p *gqlhttp.Limits }

// String lists the limits that differ from the defaults, as Set takes them.
func (v limitsValue) String() string {
	if v.p == nil {
		return ""
	}
	var parts []string
	def := gqlhttp.DefaultLimits
	for _, f := range limitFields {
		if n := f.get(v.p); n != f.get(&def) {
			parts = append(parts, fmt.Sprintf("%s=%d", f.name, n))
		}
	}
	return strings.Join(parts, ",")
}

// Set applies the pairs of s to the default limits; an unknown name, a
// value that is not a positive number or one past its bound is refused.
func (v limitsValue) Set(s string) error {
	l := gqlhttp.DefaultLimits
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		name, val, _ := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not name=positive number", pair)
		}
		f, ok := limitField(name)
		if !ok {
			return fmt.Errorf("%q is not a limit (%s)", name, strings.Join(limitNames(), ", "))
		}
		if err := f.checkValue(n); err != nil {
			return err
		}
		f.set(&l, n)
	}
	*v.p = l
	return nil
}

func (v limitsValue) check() error {
	for _, f := range limitFields {
		if err := f.checkValue(f.get(v.p)); err != nil {
			return err
		}
	}
	return nil
}

func (limitsValue) typeName() string { return "list" }

// durationValue is a time.Duration from min to max. With off set, 0 is
// accepted too and off says what it turns off; with positive set, min is
// not named (any duration above zero is accepted).
type durationValue struct {
	p        *time.Duration
	min, max time.Duration
	positive bool
	off      string
	example  string
}

func (v durationValue) String() string {
	if v.p == nil {
		return ""
	}
	return shortDuration(*v.p)
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || v.refuses(d) {
		return fmt.Errorf("%q is not %s", s, v.accepted())
	}
	*v.p = d
	return nil
}

func (v durationValue) check() error {
	if v.refuses(*v.p) {
		return fmt.Errorf("%s is not %s", shortDuration(*v.p), v.accepted())
	}
	return nil
}

func (v durationValue) refuses(d time.Duration) bool {
	if d == 0 && v.off != "" {
		return false
	}
	if v.positive && d <= 0 {
		return true
	}
	return d < v.min || d > v.max
}

// accepted says which durations are: "a duration from 1s to 1h, such as
// 10s".
func (v durationValue) accepted() string {
	var s string
	if v.positive {
		s = "a positive duration up to " + shortDuration(v.max)
	} else {
		s = "a duration from " + shortDuration(v.min) + " to " + shortDuration(v.max)
	}
	s += ", such as " + v.example
	if v.off != "" {
		s += " (0 " + v.off + ")"
	}
	return s
}

func (durationValue) typeName() string { return "duration" }

// shortDuration writes d without the zero units time.Duration.String adds
// ("720h", not "720h0m0s").
func shortDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}} {
		if d != 0 && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// shareWindowValue is FINGRAPH_SHARE_WINDOW: a duration from 0 to 10ms, or
// "off" (NoSharing).
type shareWindowValue struct {
	window *time.Duration
	off    *bool
}

const maxShareWindow = 10 * time.Millisecond

func (v shareWindowValue) String() string {
	if v.off == nil {
		return ""
	}
	if *v.off {
		return "off"
	}
	return shortDuration(*v.window)
}

func (v shareWindowValue) Set(s string) error {
	if s == "off" {
		*v.window, *v.off = 0, true
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxShareWindow {
		return fmt.Errorf("%q is not a duration from 0 to 10ms, such as 1ms, or off", s)
	}
	*v.window, *v.off = d, false
	return nil
}

func (v shareWindowValue) check() error {
	if d := *v.window; d < 0 || d > maxShareWindow {
		return fmt.Errorf("%s is not a duration from 0 to 10ms, such as 1ms, or off", shortDuration(d))
	}
	return nil
}

func (shareWindowValue) typeName() string { return "duration" }

// intValue is an int from min to max; what names the unit ("a number of
// concurrent reads").
type intValue struct {
	p        *int
	min, max int
	what     string
}

func (v intValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.Itoa(*v.p)
}

func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < v.min || n > v.max {
		return fmt.Errorf("%q is not %s from %d to %d", s, v.what, v.min, v.max)
	}
	*v.p = n
	return nil
}

func (v intValue) check() error {
	if *v.p < v.min || *v.p > v.max {
		return fmt.Errorf("%d is not %s from %d to %d", *v.p, v.what, v.min, v.max)
	}
	return nil
}

func (intValue) typeName() string { return "int" }

// floatValue is a finite float64 from min to max.
type floatValue struct {
	p        *float64
	min, max float64
	what     string
}

func (v floatValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v.refuses(f) {
		return fmt.Errorf("%q is not %s from %g to %g", s, v.what, v.min, v.max)
	}
	*v.p = f
	return nil
}

func (v floatValue) check() error {
	if v.refuses(*v.p) {
		return fmt.Errorf("%g is not %s from %g to %g", *v.p, v.what, v.min, v.max)
	}
	return nil
}

func (v floatValue) refuses(f float64) bool {
	return math.IsNaN(f) || f < v.min || f > v.max
}

func (floatValue) typeName() string { return "number" }

// boolValue is true or false, as strconv.ParseBool reads them. It is not a
// flag package boolean flag: "-register-webhook false" takes its argument.
type boolValue struct{ p *bool }

func (v boolValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatBool(*v.p)
}

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not true or false", s)
	}
	*v.p = b
	return nil
}

func (boolValue) typeName() string { return "bool" }

// stringValue is a string; valid, when set, says what is wrong with one.
type stringValue struct {
	p     *string
	valid func(string) error
}

func (v stringValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v stringValue) Set(s string) error {
	if v.valid != nil {
		if err := v.valid(s); err != nil {
			return err
		}
	}
	*v.p = s
	return nil
}

func (v stringValue) check() error {
	if v.valid == nil {
		return nil
	}
	return v.valid(*v.p)
}

func (stringValue) typeName() string { return "string" }

// listValue is a comma-separated list: items trimmed, empty ones dropped,
// upper-cased with upper; valid, when set, says what is wrong with an item.
type listValue struct {
	p     *[]string
	upper bool
	valid func(string) error
}

func (v listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v listValue) Set(s string) error {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if v.upper {
			item = strings.ToUpper(item)
		}
		if v.valid != nil {
			if err := v.valid(item); err != nil {
				return err
			}
		}
		out = append(out, item)
	}
	*v.p = out
	return nil
}

func (v listValue) check() error {
	if v.valid == nil {
		return nil
	}
	for _, item := range *v.p {
		if err := v.valid(item); err != nil {
			return err
		}
	}
	return nil
}

func (listValue) typeName() string { return "list" }

// levelValue is a log level: debug, info, warn or error (slog's names,
// any case, with slog's offsets such as info+2).
type levelValue struct{ p *slog.Level }

func (v levelValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.ToLower(v.p.String())
}

func (v levelValue) Set(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	*v.p = l
	return nil
}

func (levelValue) typeName() string { return "level" }
