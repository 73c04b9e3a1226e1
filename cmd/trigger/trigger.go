// Package trigger is the `fingraph trigger` command (like `stripe
// trigger`): it fires one event at a running sandbox or gateway, through
// the same flow the real upstream would take, so that a registered webhook
// receives it and a gateway's subscribers see it. It talks to them over
// HTTP only, as any client would.
package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fingraph/fingraph/events"
	"github.com/fingraph/fingraph/upstream/sandbox/bankingsim"
	"github.com/fingraph/fingraph/upstream/sandbox/paymentsim"
)

// DefaultSandboxURL is where trigger finds the sandbox unless told
// otherwise: the address the sandbox command and the gateway's in-process
// sandbox listen on by default (app.DefaultSandboxAddr).
const DefaultSandboxURL = "http://127.0.0.1:9090"

// DefaultGatewayURL is where trigger finds the gateway unless told
// otherwise: the gateway's default address.
const DefaultGatewayURL = "http://127.0.0.1:8080"

// Run is `fingraph trigger <EventName>`, args being what follows the word
// trigger: it asks a running sandbox to fire the event with realistic data
// (an order is created and captured for OrderCaptured), or, for the
// gateway's own events, makes them through the gateway's GraphQL API.
// `trigger --list` names every event it can fire.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	fs.SetOutput(stdout)
	def := getenv("FINGRAPH_SANDBOX_URL")
	if def == "" {
		def = DefaultSandboxURL
	}
	base := fs.String("sandbox-url", def, "base URL of the running sandbox: the sandbox command and the gateway's in-process sandbox listen on http://127.0.0.1:9090 unless it was taken (then the gateway logs the URL) ($FINGRAPH_SANDBOX_URL)")
	gwDef := getenv("FINGRAPH_GATEWAY_URL")
	if gwDef == "" {
		gwDef = DefaultGatewayURL
	}
	gateway := fs.String("gateway-url", gwDef, "base URL of the gateway, for the gateway's own events (the banking interface has none): they are fired through its GraphQL API as the sandbox's demo API client ($FINGRAPH_GATEWAY_URL)")
	list := fs.Bool("list", false, "list the events trigger can fire")
	fs.Usage = func() {
		fmt.Fprintln(stdout, "usage: fingraph trigger [-sandbox-url URL] [-gateway-url URL] <EventName> | --list")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *list {
		fmt.Fprintln(stdout, "Payments events, fired by the sandbox at -sandbox-url (the gateway's POST /sandbox/trigger takes them too):")
		for _, t := range paymentsim.Triggers() {
			fmt.Fprintf(stdout, "  %-34s %s\n", t.Name, t.Description)
		}
		fmt.Fprintln(stdout, "Gateway events, made through the gateway's GraphQL API at -gateway-url (the banking upstream has no events):")
		for _, n := range gatewayTriggerOrder {
			fmt.Fprintf(stdout, "  %-34s %s\n", n, gatewayTriggers[n].description)
		}
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("trigger: name one event (trigger --list names them)")
	}
	name := fs.Arg(0)
	if g, ok := gatewayTriggers[name]; ok {
		return g.fire(ctx, strings.TrimRight(*gateway, "/"), strings.TrimRight(*base, "/"), stdout)
	}
	if !slices.Contains(paymentsim.TriggerNames(), name) {
		return fmt.Errorf("trigger: unknown event %q; one of: %s", name, strings.Join(triggerNames(), ", "))
	}
	body, _ := json.Marshal(map[string]string{"name": name})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(*base, "/")+"/_sandbox/trigger", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("trigger: FINGRAPH_SANDBOX_URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("trigger: is the sandbox running at %s? %w", *base, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if !json.Valid(raw) {
		// Another program holds the address: its page would mean nothing
		// here, the setting that points elsewhere does.
		return fmt.Errorf("trigger: %s answered %d, and not as the sandbox does; another program may hold that address: "+
			"point -sandbox-url (FINGRAPH_SANDBOX_URL) at the sandbox, whose URL it logs at start", *base, res.StatusCode)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("trigger: the sandbox answered %d: %s", res.StatusCode, bytes.TrimSpace(raw))
	}
	var out bytes.Buffer
	if json.Indent(&out, raw, "", "  ") != nil {
		out.Reset()
		out.Write(raw)
	}
	fmt.Fprintf(stdout, "fired %s:\n%s\n", name, bytes.TrimSpace(out.Bytes()))
	return nil
}

// gatewayTrigger fires one of the gateway's own events (banking has no
// upstream events) by calling the gateway's GraphQL API the way a client
// would, as the sandbox's demo API client on the demo card wallet.
type gatewayTrigger struct {
	description string
	steps       []gqlStep
	// person signs in as the demo person (conversions are persons'
	// operations) instead of the demo API client.
	person bool
	// settle, when set, is a sandbox control path, with %s for the id the
	// last step answered, posted after the steps (a conversion settles).
	settle string
}

// gqlStep is one GraphQL call; vars may use the id the step before answered.
type gqlStep struct {
	query string
	vars  func(prev string) map[string]any
	id    string // the path of the id to pass on: "issueCard"
}

var gatewayTriggerOrder = []string{events.CardIssued, events.CardTransactionSimulated, events.ConversionCreated}

var issueStep = gqlStep{
	query: `mutation($input: IssueCardInput!) { issueCard(input: $input) { id } }`,
	vars: func(string) map[string]any {
		return map[string]any{"input": map[string]any{"fundingWalletId": bankingsim.DemoCardWalletID,
			"cardholderId": bankingsim.DaceID, "expiryMonth": 12, "expiryYear": time.Now().Year() + 3, "displayName": "trigger card"}}
	},
	id: "issueCard",
}

var gatewayTriggers = map[string]gatewayTrigger{
	events.ConversionCreated: {
		description: "the demo person converts 10.00 EUR from the demo USD wallet, and the sandbox settles it at once",
		person:      true,
		steps: []gqlStep{{
			query: `mutation($input: CreateConversionInput!) { createConversion(input: $input) { __typename ... on Conversion { id status } } }`,
			vars: func(string) map[string]any {
				return map[string]any{"input": map[string]any{"sourceWalletId": bankingsim.DemoUSDWalletID, "amount": 1000, "currency": "EUR"}}
			},
			id: "createConversion",
		}},
		settle: "/_sandbox/banking/transactions/%s/settle",
	},
	events.CardIssued: {description: "a virtual card is issued to a demo person on the demo card wallet", steps: []gqlStep{issueStep}},
	events.CardTransactionSimulated: {description: "a card is issued, then a 9.99 EUR card authorisation is simulated on it", steps: []gqlStep{issueStep, {
		query: `mutation($input: SimulateCardTransactionInput!) { simulateCardTransaction(input: $input) { __typename } }`,
		vars: func(card string) map[string]any {
			return map[string]any{"input": map[string]any{"cardId": card, "amount": 999, "currency": "EUR"}}
		},
	}}},
}

// triggerNames are all the names trigger fires.
func triggerNames() []string { return append(paymentsim.TriggerNames(), gatewayTriggerOrder...) }

func (g gatewayTrigger) fire(ctx context.Context, base, sandboxBase string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var signIn struct {
		SignIn struct {
			SessionToken string `json:"sessionToken"`
		} `json:"signIn"`
	}
	who := map[string]any{"kind": "API_KEY", "apiKey": bankingsim.DemoAPIKey}
	if g.person {
		who = map[string]any{"kind": "PERSON", "email": bankingsim.AnnaEmail, "password": bankingsim.DemoPassword, "deviceFingerprint": 1}
	}
	if err := gql(ctx, base, "", `mutation($input: SignInInput!) { signIn(input: $input) { ... on SignedIn { sessionToken } } }`,
		map[string]any{"input": who}, &signIn); err != nil {
		return err
	}
	prev := ""
	for _, st := range g.steps {
		var out map[string]json.RawMessage
		if err := gql(ctx, base, signIn.SignIn.SessionToken, st.query, st.vars(prev), &out); err != nil {
			return err
		}
		if st.id != "" {
			var v struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(out[st.id], &v)
			prev = v.ID
		}
		fmt.Fprintf(stdout, "%s\n", bytes.TrimSpace(mustJSON(out)))
	}
	if g.settle != "" && prev != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, sandboxBase+fmt.Sprintf(g.settle, url.PathEscape(prev)), nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("trigger: is the sandbox running at %s? %w", sandboxBase, err)
		}
		res.Body.Close()
		if res.StatusCode >= 300 {
			return fmt.Errorf("trigger: the sandbox did not settle %s: %d", prev, res.StatusCode)
		}
		fmt.Fprintf(stdout, "settled %s\n", prev)
	}
	return nil
}

func mustJSON(v any) []byte { b, _ := json.MarshalIndent(v, "", "  "); return b }

// gql posts one GraphQL operation and decodes its data; an error answer is
// an error.
func gql(ctx context.Context, base, token, query string, vars map[string]any, data any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("trigger: -gateway-url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("trigger: is the gateway running at %s? %w", base, err)
	}
	defer res.Body.Close()
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil {
		return fmt.Errorf("trigger: %s answered %d, not GraphQL; another program may hold that address: "+
			"point -gateway-url (FINGRAPH_GATEWAY_URL) at the gateway, whose URL it logs at start", base, res.StatusCode)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("trigger: the gateway refused: %s", out.Errors[0].Message)
	}
	return json.Unmarshal(out.Data, data)
}
