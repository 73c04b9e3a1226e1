package app

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// The command line explains itself: -h names the sub-commands and every
// flag whole, and asking for help is not an error.
func TestHelpNamesTheSubcommandsAndExitsCleanly(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, args := range [][]string{{"-h"}, {"--help"}, {"sandbox", "-h"}, {"trigger", "--help"}, {"trigger", "-h"}} {
		var out bytes.Buffer
		if err := Run(context.Background(), append([]string{"fingraph"}, args...), noEnv, &out); err != nil {
			t.Errorf("%v: %v, want a clean exit", args, err)
		}
		if out.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
		// Go's flag package takes a back-quoted word of a description as
		// the flag's argument name ("-sandbox-addr sandbox"): every
		// argument name must be the type's.
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+) (\S+)$`).FindAllStringSubmatch(out.String(), -1) {
			if m[2] != "string" && m[2] != "value" {
				t.Errorf("%v: -%s reads %q: its description lost a back-quoted word", args, m[1], m[2])
			}
		}
		if strings.Contains(out.String(), "`") {
			t.Errorf("%v: a back quote in the usage:\n%s", args, out.String())
		}
	}
	var out bytes.Buffer
	_ = Run(context.Background(), []string{"fingraph", "-h"}, noEnv, &out)
	for _, want := range []string{"fingraph sandbox", "fingraph trigger", "-sandbox-addr string", "-addr string"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not show %q:\n%s", want, out.String())
		}
	}
}
