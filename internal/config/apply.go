package config

import (
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/delivery"
)

// builtinNamespaces are handled by relay itself; a configured handler runs
// after relay's own, or replaces it with override = true.
func builtinNamespaces() []string { return []string{"relay", "broadcast", "memory"} }

var (
	// nameRE is the shape of agent and workspace names: they become NATS
	// subject tokens, so no dots, spaces or wildcards.
	nameRE = shape{lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]*$`), 64}
	// namespaceRE is the shape of a user namespace (compared in lower case).
	namespaceRE = shape{lazyre.New(`^[a-z][a-z0-9_-]*$`), 64}
)

// shape is a regular expression of ASCII characters and the most bytes it
// may match. A bound written in the expression ({0,63}) compiles into as
// many copies of its class, thousands of allocations in every relay
// process's start (issue 34).
type shape struct {
	re  func() *regexp.Regexp
	max int
}

// MatchString reports whether v has the shape.
func (s shape) MatchString(v string) bool { return len(v) <= s.max && s.re().MatchString(v) }

// applier applies one file's values onto the merged Config, checking each
// and recording its source.
type applier struct {
	c      *Config
	f      *parsedFile
	base   string              // folder relative paths are resolved against
	home   string              // for ~/ in paths
	errs   Errors              // mistakes found so far
	pat    map[string]int      // pattern name -> index in c.Patterns
	setCmd map[string]struct{} // patterns whose command has been set somewhere
}

func (a *applier) fail(key, format string, args ...any) {
	a.errs = append(a.errs, a.f.errAt(key, format, args...))
}

func (a *applier) set(key string) { a.c.sources[key] = a.f.source(key) }

func (a *applier) apply() {
	d := &a.f.data
	if d.Name != nil {
		if a.checkName("name", *d.Name, "an agent name") {
			a.c.Name = *d.Name
			a.set("name")
		}
	}
	if d.Workspace != nil {
		if a.checkName("workspace", *d.Workspace, "a workspace name") {
			a.c.Workspace = *d.Workspace
			a.set("workspace")
		}
	}
	if d.Profile != nil {
		if a.checkName("profile", *d.Profile, "a profile name") {
			a.c.Profile = *d.Profile
			a.set("profile")
		}
	}
	if d.MCP != nil {
		a.c.MCP = *d.MCP
		a.set("mcp")
	}
	if h := d.Hub; h != nil {
		if h.URL != nil {
			if msg := checkHubURL(*h.URL); msg != "" {
				a.fail("hub.url", "%s", msg)
			} else {
				a.c.Hub.URL = *h.URL
				a.set("hub.url")
			}
		}
		if h.TokenFile != nil {
			if p, ok := a.file("hub.token_file", *h.TokenFile, false); ok {
				a.c.Hub.TokenFile = p
				a.set("hub.token_file")
			}
		}
		if h.Creds != nil {
			if p, ok := a.file("hub.creds", *h.Creds, false); ok {
				a.c.Hub.Creds = p
				a.set("hub.creds")
			}
		}
		if h.TLSCA != nil {
			if p, ok := a.file("hub.tls_ca", *h.TLSCA, false); ok {
				if err := checkCA(p); err != nil {
					a.fail("hub.tls_ca", "%v", err)
				} else {
					a.c.Hub.TLSCA = p
					a.set("hub.tls_ca")
				}
			}
		}
	}
	if dl := d.Delivery; dl != nil {
		if dl.Mode != nil {
			if m, err := delivery.ParseMode(*dl.Mode); err == nil && *dl.Mode != "" {
				a.c.Delivery.Mode = m
				a.set("delivery.mode")
			} else {
				a.fail("delivery.mode", "%q is not a delivery mode%s", *dl.Mode,
					hint(*dl.Mode, []string{"batch", "wait", "queue", "steer", "followUp"}, "batch, wait, queue or steer"))
			}
		}
		a.millis("delivery.idle_quiet_ms", dl.IdleQuietMS, &a.c.Delivery.IdleQuiet)
		a.millis("delivery.human_quiet_ms", dl.HumanQuietMS, &a.c.Delivery.HumanQuiet)
		a.integer("delivery.max_body_bytes", dl.MaxBodyBytes, 1, 1<<20, &a.c.Delivery.MaxBodyBytes)
		a.duration("delivery.stuck_after", dl.StuckAfter, &a.c.Delivery.StuckAfter)
	}
	if dm := d.Damping; dm != nil {
		a.duration("damping.pair_window", dm.PairWindow, &a.c.Damping.PairWindow)
		a.integer("damping.pair_max", dm.PairMax, 1, 1_000_000, &a.c.Damping.PairMax)
		a.duration("damping.agent_window", dm.AgentWindow, &a.c.Damping.AgentWindow)
		a.integer("damping.agent_max", dm.AgentMax, 1, 1_000_000, &a.c.Damping.AgentMax)
		a.integer("damping.max_hops", dm.MaxHops, 1, 1000, &a.c.Damping.MaxHops)
	}
	if m := d.Memory; m != nil {
		a.integer("memory.load_at_start", m.LoadAtStart, 0, 100, &a.c.Memory.LoadAtStart)
		if m.PromptOnEnd != nil {
			a.c.Memory.PromptOnEnd = *m.PromptOnEnd
			a.set("memory.prompt_on_end")
		}
		a.memoryStore(m)
	}
	a.patterns()
	a.hooks()
}

func (a *applier) checkName(key, v, what string) bool {
	if !nameRE.MatchString(v) {
		a.fail(key, "%q is not %s (letters, digits, '_' and '-', at most 64, starting with a letter or digit)", v, what)
		return false
	}
	return true
}

func checkHubURL(v string) string {
	if v == "" || v == NoHub {
		return ""
	}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		u, err := url.Parse(part)
		if err != nil || u.Host == "" {
			return fmt.Sprintf("%q is not a NATS URL (want nats://HOST:PORT)", part)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Sprintf("%q: unknown scheme %q (want nats, tls, ws or wss)", part, u.Scheme)
		}
	}
	return ""
}

func (a *applier) millis(key string, v *int64, dst *time.Duration) {
	if v == nil {
		return
	}
	if *v < 0 || *v > int64(MaxTimeout/time.Millisecond) {
		a.fail(key, "%d is out of range (want milliseconds from 0 to %d)", *v, int64(MaxTimeout/time.Millisecond))
		return
	}
	*dst = time.Duration(*v) * time.Millisecond
	a.set(key)
}

func (a *applier) integer(key string, v *int64, lo, hi int64, dst *int) {
	if v == nil {
		return
	}
	if *v < lo || *v > hi {
		a.fail(key, "%d is out of range (want %d to %d)", *v, lo, hi)
		return
	}
	*dst = int(*v)
	a.set(key)
}

// duration reads a duration written as "30s" or as an integer number of
// seconds; zero and negative durations are mistakes.
func (a *applier) duration(key string, v any, dst *time.Duration) bool {
	if v == nil {
		return false
	}
	d, msg := parseDuration(v)
	if msg != "" {
		a.fail(key, "%s", msg)
		return false
	}
	*dst = d
	a.set(key)
	return true
}

func parseDuration(v any) (time.Duration, string) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		d, err = time.ParseDuration(x)
		if err != nil {
			return 0, fmt.Sprintf("%q is not a duration (want a number with a unit, such as \"500ms\", \"30s\" or \"2m\")", x)
		}
	case int64:
		if x > int64(MaxTimeout/time.Second) || x < -int64(MaxTimeout/time.Second) {
			return 0, fmt.Sprintf("%d seconds is longer than %v", x, MaxTimeout)
		}
		d = time.Duration(x) * time.Second
	default:
		return 0, fmt.Sprintf("wrong type: want a duration such as \"30s\" or a number of seconds, have %s", tomlKind(v))
	}
	if d <= 0 {
		return 0, fmt.Sprintf("%v is not positive", v)
	}
	if d > MaxTimeout {
		return 0, fmt.Sprintf("%v is longer than %v", v, MaxTimeout)
	}
	return d, ""
}

func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	default:
		return "a date or time"
	}
}

// command reads a command written as a string (sh -c) or a list of
// strings (argv).
func (a *applier) command(key string, v any) (Command, bool) {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			a.fail(key, "empty command")
			return Command{}, false
		}
		return Command{Shell: x, At: a.f.source(key)}, true
	case []any:
		if len(x) == 0 {
			a.fail(key, "empty command")
			return Command{}, false
		}
		argv := make([]string, len(x))
		for i, el := range x {
			s, ok := el.(string)
			if !ok {
				a.fail(key, "wrong type: argument %d: want a string, have %s", i+1, tomlKind(el))
				return Command{}, false
			}
			argv[i] = s
		}
		if argv[0] == "" {
			a.fail(key, "empty program name")
			return Command{}, false
		}
		// A relative program path ("./scripts/deploy.sh") names a file
		// of the project: it is resolved from the folder of the file that
		// names it (the project root for .relay/config.toml), never from
		// wherever the agent happens to start.
		if strings.ContainsRune(argv[0], '/') && !filepath.IsAbs(argv[0]) {
			argv[0] = filepath.Join(a.base, argv[0])
		}
		return Command{Argv: argv, At: a.f.source(key)}, true
	default:
		a.fail(key, "wrong type: want a string (run by sh -c) or a list of strings, have %s", tomlKind(v))
		return Command{}, false
	}
}

// file resolves a path against the file's folder (or ~) and checks that
// it exists: a folder when dir, else a regular file.
func (a *applier) file(key, v string, dir bool) (string, bool) {
	if v == "" {
		a.fail(key, "empty path")
		return "", false
	}
	p := v
	if rest, ok := strings.CutPrefix(p, "~/"); ok && a.home != "" {
		p = filepath.Join(a.home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.base, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		a.fail(key, "%s does not exist", p)
		return "", false
	case dir && !st.IsDir():
		a.fail(key, "%s is not a folder", p)
		return "", false
	case !dir && st.IsDir():
		a.fail(key, "%s is a folder, not a file", p)
		return "", false
	}
	return p, true
}

func isBuiltin(ns string) bool {
	for _, b := range builtinNamespaces() {
		if ns == b {
			return true
		}
	}
	return false
}

func eventNames() []string {
	var out []string
	for _, e := range Events() {
		out = append(out, string(e), "on"+string(e))
	}
	return out
}

func (a *applier) hooks() {
	names := make([]string, 0, len(a.f.data.Hooks))
	for n := range a.f.data.Hooks {
		names = append(names, n)
	}
	line := func(n string) int {
		if p, ok := a.f.pos["hooks."+n]; ok {
			return p.Line
		}
		return a.f.pos["hooks."+n+"[0]"].Line
	}
	sort.Slice(names, func(i, j int) bool {
		if li, lj := line(names[i]), line(names[j]); li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	for _, raw := range names {
		ev, ok := ParseEvent(raw)
		if !ok {
			a.fail("hooks."+raw, "unknown event%s", hint(raw, eventNames(), eventList()))
			continue
		}
		for gi, fg := range a.f.data.Hooks[raw] {
			gkey := fmt.Sprintf("hooks.%s[%d]", raw, gi)
			// The key `relay config show` uses: the index in the merged list.
			out := fmt.Sprintf("hooks.%s[%d]", ev, len(a.c.Hooks[ev]))
			srcs := map[string]Source{}
			g := HookGroup{Source: a.f.source(gkey)}
			if fg.Matcher != nil {
				g.Matcher = *fg.Matcher
				re, err := compileMatcher(ev, g.Matcher)
				if err != nil {
					a.fail(gkey+".matcher", "bad regular expression %q: %v", g.Matcher, err)
					continue
				}
				g.Re = re
				srcs[out+".matcher"] = a.f.source(gkey + ".matcher")
			}
			if !a.idleTiming(ev, gkey, out, fg, &g, srcs) {
				continue
			}
			if len(fg.Hooks) == 0 {
				a.fail(gkey, "no hooks: add [[hooks.%s.hooks]] with type = \"command\" and a command", raw)
				continue
			}
			good := true
			for hi, fh := range fg.Hooks {
				hkey := fmt.Sprintf("%s.hooks[%d]", gkey, hi)
				h := defaultHook(a.f.source(hkey))
				if fh.Type != nil && *fh.Type != "command" {
					a.fail(hkey+".type", "%q hooks are not supported (want \"command\")", *fh.Type)
					good = false
					continue
				}
				if fh.Command == nil {
					a.fail(hkey, "missing command")
					good = false
					continue
				}
				cmd, ok := a.command(hkey+".command", fh.Command)
				if !ok {
					good = false
					continue
				}
				h.Command = cmd
				hout := fmt.Sprintf("%s.hooks[%d]", out, len(g.Hooks))
				srcs[hout+".command"] = a.f.source(hkey + ".command")
				if fh.Timeout != nil {
					d, msg := parseDuration(fh.Timeout)
					if msg != "" {
						a.fail(hkey+".timeout", "%s", msg)
						good = false
						continue
					}
					h.Timeout = d
					srcs[hout+".timeout"] = a.f.source(hkey + ".timeout")
				}
				if fh.Neutralize != nil {
					h.Neutralize = *fh.Neutralize
				}
				g.Hooks = append(g.Hooks, h)
			}
			if good {
				a.c.Hooks[ev] = append(a.c.Hooks[ev], g)
				for k, src := range srcs {
					a.c.sources[k] = src
				}
			}
		}
	}
}

// idleTiming reads an Idle group's after, every and max (refused on any
// other event); false when one is wrong.
func (a *applier) idleTiming(ev Event, gkey, out string, fg fileGroup, g *HookGroup, srcs map[string]Source) bool {
	if ev == Idle {
		g.After, g.Max = DefaultIdleAfter, DefaultIdleMax
	}
	ok := true
	for _, k := range []struct {
		name string
		v    any
		dst  *time.Duration
	}{{"after", fg.After, &g.After}, {"every", fg.Every, &g.Every}} {
		if k.v == nil {
			continue
		}
		if ev != Idle {
			a.fail(gkey+"."+k.name, "%s is for Idle hooks only", k.name)
			ok = false
			continue
		}
		d, msg := parseDuration(k.v)
		if msg != "" {
			a.fail(gkey+"."+k.name, "%s", msg)
			ok = false
			continue
		}
		*k.dst = d
		srcs[out+"."+k.name] = a.f.source(gkey + "." + k.name)
	}
	if fg.Max != nil {
		switch {
		case ev != Idle:
			a.fail(gkey+".max", "max is for Idle hooks only")
			ok = false
		case *fg.Max < 1 || *fg.Max > 1000:
			a.fail(gkey+".max", "%d is out of range (want 1 to 1000)", *fg.Max)
			ok = false
		default:
			g.Max = int(*fg.Max)
			srcs[out+".max"] = a.f.source(gkey + ".max")
		}
	}
	return ok
}

func eventList() string {
	var s []string
	for _, e := range Events() {
		s = append(s, string(e))
	}
	return strings.Join(s, ", ")
}

// compileMatcher compiles a hook matcher: "" and "*" match everything; for
// Output it may match anywhere in the line, for other events it must match
// the whole subject (so "Bob" does not match "Bobby").
func compileMatcher(ev Event, m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	re, err := regexp.Compile(m)
	if err != nil || ev == Output {
		return re, err
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// quote formats a string value for show output.
func quote(s string) string { return strconv.Quote(s) }
