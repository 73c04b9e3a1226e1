package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fingraph/fingraph/cmd/trigger"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// TestTriggerEveryEventReachesASubscriber runs `fingraph trigger <Name>` for
// every name `trigger --list` gives, against a gateway's in-process sandbox,
// and checks that a GraphQL subscriber receives each event, with its data,
// through the real path: sandbox webhook, intake, JetStream, websocket.
func TestTriggerEveryEventReachesASubscriber(t *testing.T) {
	g := liveGateway(t)
	g = g.as(g.signInAPI(t))

	var list bytes.Buffer
	if err := trigger.Run(context.Background(), []string{"--list"}, func(string) string { return "" }, &list); err != nil {
		t.Fatalf("trigger --list: %v", err)
	}
	// The sandbox's payments events, then the gateway's own (banking has
	// no upstream events; those go through the gateway's API).
	names := append(paymentsim.TriggerNames(), "CardIssued", "CardTransactionSimulated", "ConversionCreated")
	for _, n := range names {
		if !strings.Contains(list.String(), n) {
			t.Errorf("trigger --list does not name %s:\n%s", n, list.String())
		}
	}

	ws := g.dialWS(t, nil, nil)
	ws.subscribeFromNow(g, "1", `subscription($names: [String!], $after: String) { events(names: $names, after: $after) `+liveFields+` }`,
		map[string]any{"names": names})
	for _, name := range names {
		var out bytes.Buffer
		err := trigger.Run(context.Background(), []string{"-sandbox-url", g.SandboxURL, "-gateway-url", g.URL, name},
			func(string) string { return "" }, &out)
		if err != nil {
			t.Fatalf("trigger %s: %v", name, err)
		}
		if name == "ConversionCreated" && !strings.Contains(out.String(), "settled ") {
			t.Errorf("trigger %s did not settle the conversion: %s", name, out.String())
		}
		if !strings.HasPrefix(name, "Card") && !strings.HasPrefix(name, "Conversion") && !strings.Contains(out.String(), `"name": "`+name+`"`) {
			t.Errorf("trigger %s printed %s", name, out.String())
		}
		// A trigger goes through the real flow, so earlier events of that
		// flow (OrderCreated before OrderCaptured) arrive first.
		for {
			e := ws.next("1", "events")
			if e.Event.Name != name {
				continue
			}
			if strings.HasPrefix(name, "Order") && e.Event.OrderID == "" {
				t.Errorf("%s without its order: %+v", name, e)
			}
			if strings.HasPrefix(name, "Individual") && e.Event.IndividualID == "" {
				t.Errorf("%s without its individual: %+v", name, e)
			}
			if strings.HasPrefix(name, "PendingAction") && len(e.Event.PendingActions) == 0 {
				t.Errorf("%s without its pending action: %+v", name, e)
			}
			if strings.HasPrefix(name, "Card") && (e.Source != "gateway" || e.Event.Payload["card_id"] == nil) {
				t.Errorf("%s is not the gateway's, with its card: %+v", name, e)
			}
			break
		}
	}

	var out bytes.Buffer
	if err := trigger.Run(context.Background(), []string{"-sandbox-url", g.SandboxURL, "NoSuchEvent"},
		func(string) string { return "" }, &out); err == nil || !strings.Contains(err.Error(), "OrderCaptured") {
		t.Errorf("an unknown name names the known ones: %v", err)
	}
}
