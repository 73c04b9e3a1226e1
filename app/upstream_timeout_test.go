package app

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestUpstreamTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name              string
		env               map[string]string
		args              []string
		payments, banking time.Duration
		wantErr           string
	}{
		{name: "default", payments: 10 * time.Second, banking: 10 * time.Second},
		{name: "one for both", env: map[string]string{"FINGRAPH_UPSTREAM_TIMEOUT": "3s"}, payments: 3 * time.Second, banking: 3 * time.Second},
		{name: "flag wins", env: map[string]string{"FINGRAPH_UPSTREAM_TIMEOUT": "3s"}, args: []string{"-upstream-timeout", "4s"}, payments: 4 * time.Second, banking: 4 * time.Second},
		{name: "per upstream overrides", env: map[string]string{"FINGRAPH_UPSTREAM_TIMEOUT": "3s", "FINGRAPH_BANKING_TIMEOUT": "20s"}, payments: 3 * time.Second, banking: 20 * time.Second},
		{name: "payments only", args: []string{"-payments-timeout", "500ms"}, payments: 500 * time.Millisecond, banking: 10 * time.Second},
		{name: "not a duration", env: map[string]string{"FINGRAPH_UPSTREAM_TIMEOUT": "ten"}, wantErr: "FINGRAPH_UPSTREAM_TIMEOUT"},
		{name: "zero", env: map[string]string{"FINGRAPH_UPSTREAM_TIMEOUT": "0"}, wantErr: "FINGRAPH_UPSTREAM_TIMEOUT"},
		{name: "bad payments", env: map[string]string{"FINGRAPH_PAYMENTS_TIMEOUT": "-1s"}, wantErr: "FINGRAPH_PAYMENTS_TIMEOUT"},
		{name: "bad banking", args: []string{"-banking-timeout", "1h"}, wantErr: "FINGRAPH_BANKING_TIMEOUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error naming %s, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.PaymentsTimeout != tc.payments || cfg.BankingTimeout != tc.banking {
				t.Errorf("payments %s, banking %s; want %s, %s", cfg.PaymentsTimeout, cfg.BankingTimeout, tc.payments, tc.banking)
			}
		})
	}
}
