package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/app"
	"github.com/fingraph/fingraph/cmd/trigger"
)

// The command line explains itself: -h names the sub-commands and every
// flag whole, and asking for help is not an error.
func TestHelpNamesTheSubcommandsAndExitsCleanly(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, args := range [][]string{{"-h"}, {"--help"}, {"sandbox", "-h"}, {"trigger", "--help"}, {"trigger", "-h"}} {
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"fingraph"}, args...), noEnv, &out); err != nil {
			t.Errorf("%v: %v, want a clean exit", args, err)
		}
		if out.Len() == 0 {
			t.Errorf("%v printed nothing", args)
		}
		// Each flag's argument is named by its type ("-session-ttl
		// duration"); Go's flag package would take a back-quoted word of a
		// description instead ("-sandbox-addr sandbox").
		types := []string{"string", "duration", "int", "number", "bool", "list", "json", "level", "mode"}
		for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+) (\S+)$`).FindAllStringSubmatch(out.String(), -1) {
			if !slices.Contains(types, m[2]) {
				t.Errorf("%v: -%s reads %q, not the name of its type", args, m[1], m[2])
			}
		}
		if strings.Contains(out.String(), "`") {
			t.Errorf("%v: a back quote in the usage:\n%s", args, out.String())
		}
	}
	var out bytes.Buffer
	_ = run(context.Background(), []string{"fingraph", "-h"}, noEnv, &out)
	for _, want := range []string{"fingraph sandbox", "fingraph trigger", "-sandbox-addr string", "-addr string",
		"-session-ttl duration", "-limits list", "($FINGRAPH_BANK_POLL_INTERVAL) (default 10s)", "-live-poll-interval duration\n    \told name of -bank-poll-interval"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not show %q:\n%s", want, out.String())
		}
	}
}

// A mistyped sub-command is refused with the valid ones named, not taken
// for a stray argument of the gateway's flags.
func TestAMistypedSubcommandNamesTheValidOnes(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"fingraph", "triger", "OrderCreated"}, func(string) string { return "" }, &out)
	if err == nil {
		t.Fatal("a mistyped sub-command started something")
	}
	for _, want := range []string{`"triger"`, "sandbox", "trigger"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %s: %v", want, err)
		}
	}
}

// trigger's default sandbox is where the sandbox listens by default.
func TestTriggerFindsTheSandboxWhereItListensByDefault(t *testing.T) {
	if want := "http://" + app.DefaultSandboxAddr; trigger.DefaultSandboxURL != want {
		t.Errorf("trigger looks for the sandbox at %s; it listens at %s", trigger.DefaultSandboxURL, want)
	}
}
