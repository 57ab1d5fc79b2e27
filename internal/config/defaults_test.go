package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/hooks"
	"github.com/relayhq/relay/internal/scanner"
	"github.com/relayhq/relay/internal/session"
)

// TestDefaultsComeFromPackages: the configuration's defaults are the
// packages' own (issue 19: config said 16 KiB and 8 hops, delivery 4 KiB
// and 10), and the schema's documented defaults say the same.
func TestDefaultsComeFromPackages(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if c.Delivery.Mode != delivery.DefaultMode || c.Delivery.HumanQuiet != delivery.DefaultHumanQuiet ||
		c.Delivery.MaxBodyBytes != delivery.DefaultMaxBody {
		t.Errorf("delivery defaults %+v", c.Delivery)
	}
	// Declared in one package, named again in another (issue 33): these
	// say the same. A hold of the CLI's PreToolUse hook lasts as long as a
	// BeforeToolCall hook may run; hookrpc, a leaf package, repeats it.
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"workspace (bus)", config.DefaultWorkspace, bus.DefaultWorkspace},
		{"idle quiet (scanner)", config.DefaultIdleQuiet, scanner.DefaultQuietTime},
		{"hook timeout (hooks)", config.DefaultTimeout, hooks.DefaultTimeout},
		{"idle after (session)", config.DefaultIdleAfter, session.DefaultIdleAfter},
		{"idle max (session)", config.DefaultIdleMax, session.DefaultIdleMax},
		{"pre-tool-use hold (hookrpc)", config.DefaultTimeout, hookrpc.PreToolUseTimeout},
	} {
		if d.got != d.want {
			t.Errorf("default %s: config has %v, the package %v", d.name, d.got, d.want)
		}
	}
	if c.Damping != delivery.DefaultDamperOptions() {
		t.Errorf("damping defaults %+v, delivery's %+v", c.Damping, delivery.DefaultDamperOptions())
	}

	b, err := os.ReadFile("../../docs/config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Properties map[string]struct {
				Default any `json:"default"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	d := delivery.DefaultDamperOptions()
	for key, want := range map[[2]string]any{
		{"delivery", "mode"}:           string(delivery.DefaultMode),
		{"delivery", "human_quiet_ms"}: delivery.DefaultHumanQuiet.Milliseconds(),
		{"delivery", "max_body_bytes"}: delivery.DefaultMaxBody,
		{"delivery", "stuck_after"}:    "30s",
		{"damping", "pair_window"}:     "1m",
		{"damping", "pair_max"}:        d.PairMax,
		{"damping", "agent_window"}:    "1m",
		{"damping", "agent_max"}:       d.AgentMax,
		{"damping", "max_hops"}:        d.MaxHops,
	} {
		got := schema.Properties[key[0]].Properties[key[1]].Default
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("schema default of %s.%s = %v, want %v", key[0], key[1], got, want)
		}
	}
	if d.PairWindow.String() != "1m0s" || d.AgentWindow.String() != "1m0s" {
		t.Errorf("windows changed (%v, %v): update the schema's defaults", d.PairWindow, d.AgentWindow)
	}
}
