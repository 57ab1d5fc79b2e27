package config

import (
	"fmt"
	"strings"
	"time"
)

// Value is one merged setting with its source, as `relay config show`
// prints it.
type Value struct {
	Key    string // dotted key, as in the file (`delivery.idle_quiet_ms`)
	Value  any    // string, int64, bool or []string, as the file would hold it
	Source Source
}

// Text formats the value in TOML syntax.
func (v Value) Text() string {
	switch x := v.Value.(type) {
	case string:
		return quote(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	default:
		return fmt.Sprint(x)
	}
}

// Values lists every setting in a fixed order: the top-level keys, the
// tables in file order, then patterns and hooks in merge order.
func (c *Config) Values() []Value {
	var out []Value
	add := func(key string, v any) {
		out = append(out, Value{Key: key, Value: v, Source: c.sources[key]})
	}
	add("name", c.Name)
	add("workspace", c.Workspace)
	add("profile", c.Profile)
	add("mcp", c.MCP)
	add("hub.url", c.Hub.URL)
	add("hub.token_file", c.Hub.TokenFile)
	add("hub.creds", c.Hub.Creds)
	add("hub.tls_ca", c.Hub.TLSCA)
	add("delivery.mode", string(c.Delivery.Mode))
	add("delivery.idle_quiet_ms", c.Delivery.IdleQuiet.Milliseconds())
	add("delivery.human_quiet_ms", c.Delivery.HumanQuiet.Milliseconds())
	add("delivery.max_body_bytes", int64(c.Delivery.MaxBodyBytes))
	add("delivery.stuck_after", durationText(c.Delivery.StuckAfter))
	add("damping.pair_window", durationText(c.Damping.PairWindow))
	add("damping.pair_max", int64(c.Damping.PairMax))
	add("damping.agent_window", durationText(c.Damping.AgentWindow))
	add("damping.agent_max", int64(c.Damping.AgentMax))
	add("damping.max_hops", int64(c.Damping.MaxHops))
	add("memory.load_at_start", int64(c.Memory.LoadAtStart))
	add("memory.prompt_on_end", c.Memory.PromptOnEnd)
	add("memory.backend", c.Memory.Backend)
	add("memory.embedder.provider", c.Memory.Embedder.Provider)
	add("memory.embedder.url", c.Memory.Embedder.URL)
	add("memory.embedder.model", c.Memory.Embedder.Model)
	add("memory.embedder.dimensions", int64(c.Memory.Embedder.Dimensions))
	add("memory.embedder.api_key_env", c.Memory.Embedder.APIKeyEnv)
	add("memory.qdrant.url", c.Memory.Qdrant.URL)
	add("memory.qdrant.collection", c.Memory.Qdrant.Collection)
	add("memory.qdrant.api_key_env", c.Memory.Qdrant.APIKeyEnv)
	for _, p := range c.Patterns {
		k := p.Key + "."
		add(k+"command", commandValue(p.Command))
		add(k+"timeout", durationText(p.Timeout))
		add(k+"allow", append([]string{}, p.Allow...))
		add(k+"cwd", p.Cwd)
		add(k+"inject", p.Inject)
		if isBuiltin(p.Name) {
			add(k+"override", p.Override)
		}
	}
	for _, ev := range Events() {
		for gi, g := range c.Hooks[ev] {
			gk := fmt.Sprintf("hooks.%s[%d].", ev, gi)
			add(gk+"matcher", g.Matcher)
			if ev == Idle {
				add(gk+"after", durationText(g.After))
				add(gk+"every", durationText(g.Every))
				add(gk+"max", int64(g.Max))
			}
			for hi, h := range g.Hooks {
				hk := fmt.Sprintf("%shooks[%d].", gk, hi)
				add(hk+"command", commandValue(h.Command))
				add(hk+"timeout", durationText(h.Timeout))
			}
		}
	}
	return out
}

func commandValue(c Command) any {
	if c.Shell != "" {
		return c.Shell
	}
	return append([]string{}, c.Argv...)
}

// durationText writes a duration the way a person would type it: "1m",
// not "1m0s".
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
