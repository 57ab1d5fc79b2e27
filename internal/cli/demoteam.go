//go:build !lean

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/team"
	"github.com/relayhq/relay/internal/termsafe"
)

// The demo's team (relay demo --team): the scripted agents of the plain
// demo, each a shell script in the demo's folder, started from a team
// file. Alice waits for her prompt, which relay types in once she is
// ready, before she asks Bob.

// demoTeamFile is the team file relay demo --team writes and starts.
const demoTeamFile = `# relay demo --team: three scripted agents started from one file.
# With real agents: command = ["claude"], ["codex"], ["gemini"].
[team]
workspace = "demo"

[[agent]]
name = "Alice"
command = ["sh", "agents/alice.sh"]
prompt = "kick-off: get the tests run and the auth change reviewed"

[[agent]]
name = "Bob"
command = ["sh", "agents/bob.sh"]

[[agent]]
name = "Carol"
command = ["sh", "agents/carol.sh"]
`

// demoTeamScripts are the agents' scripts, by file name: the plain demo's
// (demoAgents), Alice's first message sent on her prompt.
func demoTeamScripts() map[string]string {
	scripts := map[string]string{}
	for _, a := range demoAgents() {
		s := a.script
		if a.name == "Alice" {
			s = demoTeamAlice
		}
		scripts[strings.ToLower(a.name)+".sh"] = s + "\n"
	}
	return scripts
}

// demoTeamAlice is Alice's script in the team demo: she asks Bob once her
// prompt arrived.
const demoTeamAlice = `while IFS= read -r line; do
  case "$line" in
    *"kick-off"*) printf "%s\n\n" "@relay:Bob Hi Bob, please run the integration tests on main and tell me what fails." ;;
    *"from agent Bob"*) printf "%s\n\n" "@relay:Carol Bob says all 42 tests pass. Can you review the auth change?" ;;
    *"from agent Carol"*) printf "%s\n\n" "@broadcast: Review done, merging the auth change. Thanks both!" ;;
  esac
done`

// demoTeamWorkspace is the workspace of demoTeamFile.
const demoTeamWorkspace = "demo"

// writeDemoTeam writes the demo's project into dir: .relay/team.toml and
// the agents' scripts.
func writeDemoTeam(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o700); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o700); err != nil {
		return "", err
	}
	for name, s := range demoTeamScripts() {
		if err := os.WriteFile(filepath.Join(dir, "agents", name), []byte(s), 0o600); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, ".relay", team.FileName)
	if err := os.WriteFile(path, []byte(demoTeamFile), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// runDemoTeam is relay demo --team: the team file written, shown and
// started (headless, as relay team up --headless does) against the demo's
// own hub; the conversation is shown from the hub's log, each message
// with its receipts' stages; then relay team status and relay team down.
func runDemoTeam(ctx context.Context, env *Env, dir string, timeout time.Duration) error {
	path, err := writeDemoTeam(filepath.Join(dir, "project"))
	if err != nil {
		return fmt.Errorf("write the demo's team file: %w", err)
	}
	f, err := team.Load(path)
	if err != nil {
		return fmt.Errorf("the demo's team file: %w", err)
	}
	home := filepath.Join(dir, "home")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := hub.Start(ctx, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if err != nil {
		return fmt.Errorf("start the demo's hub: %w", err)
	}
	defer h.Shutdown()
	fmt.Fprintf(env.Stdout, "relay demo --team: a hub at %s and this team file, %s:\n\n", h.URL(), path)
	for _, l := range strings.Split(strings.TrimRight(demoTeamFile, "\n"), "\n") {
		fmt.Fprintf(env.Stdout, "  │ %s\n", l)
	}
	fmt.Fprintf(env.Stdout, "\n$ relay team up --headless\n")

	c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "demo", Workspace: demoTeamWorkspace})
	if err != nil {
		return err
	}
	defer c.Close()
	agentEnv := append(env.environ(), "RELAY_HOME="+home, "RELAY_HUB="+h.URL(), "RELAY_TOKEN="+h.Token(), "RELAY_WORKSPACE="+demoTeamWorkspace)
	o := team.Options{File: f, Workspace: demoTeamWorkspace, Home: home, Relay: wrapperBinary(env.Executable), Env: agentEnv,
		Headless: true, Out: newPrefixWriter(env.Stdout, "  "), By: "demo"}
	// Down even when the demo fails half way: no agent outlives it.
	defer func() {
		fmt.Fprintf(env.Stdout, "\n$ relay team down\n")
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := team.Down(dctx, o, c); err != nil {
			fmt.Fprintf(env.Stderr, "relay demo: team down: %v\n", err)
		}
	}()
	start := time.Now()
	if err := team.Check(ctx, o); err != nil {
		return err
	}
	plan, err := team.MakePlan(ctx, o, c)
	if err != nil {
		return err
	}
	if err := plan.Run(ctx, o, c); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nAlice's prompt is typed in; the messages, from the hub's log:\n\n")
	entries, err := followDemo(ctx, c, env.Stdout)
	elapsed := time.Since(start)
	fmt.Fprintf(env.Stdout, "\n$ relay team status\n")
	_ = team.Status(ctx, team.Options{File: f, Workspace: demoTeamWorkspace, Home: home, Env: agentEnv, Out: newPrefixWriter(env.Stdout, "  ")}, c)
	fmt.Fprintf(env.Stdout, "\nEach message's receipts (relay log):\n")
	for _, e := range entries {
		names := make([]string, 0, len(e.Status))
		for n := range e.Status {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			to := n
			if e.To == bus.Broadcast {
				to += " (broadcast)"
			}
			fmt.Fprintf(env.Stdout, "  %s → %s: %s\n", e.From, to, e.Status[n])
		}
	}
	fmt.Fprintln(env.Stdout)
	printDemoSummary(env.Stdout, entries, elapsed)
	if err != nil {
		return fmt.Errorf("the demo did not finish: %w", err)
	}
	fmt.Fprint(env.Stdout, `
Start your own team: write .relay/team.toml in your project (docs/team.md),
then relay team up (each agent in a tmux window), relay attach NAME, relay team down.
`)
	return nil
}

// followDemo prints each message of the log once, as it is stored, and
// waits until the conversation's deliveries (demoDeliveries) happened.
// It returns the log's entries as they were then.
func followDemo(ctx context.Context, c *bus.Client, w io.Writer) ([]bus.Entry, error) {
	shown := map[string]bool{}
	for {
		var entries []bus.Entry
		err := c.Log(ctx, bus.LogOptions{}, func(e bus.Entry) error {
			entries = append(entries, e)
			return nil
		})
		if err != nil {
			return entries, err
		}
		delivered := 0
		for _, e := range entries {
			if !shown[e.ID] {
				shown[e.ID] = true
				fmt.Fprintf(w, "  %s → %s: %s\n", e.From, e.To, termsafe.Text(e.Body))
			}
			for _, st := range e.Status {
				if bus.Reached(st, bus.StatusDelivered) {
					delivered++
				}
			}
		}
		if delivered >= demoDeliveries {
			return entries, nil
		}
		select {
		case <-ctx.Done():
			return entries, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// prefixWriter writes each line with a prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mid    *bool // within a line: the prefix is written already
}

func newPrefixWriter(w io.Writer, prefix string) prefixWriter {
	return prefixWriter{w: w, prefix: prefix, mid: new(bool)}
}

func (p prefixWriter) Write(b []byte) (int, error) {
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		if !*p.mid {
			out.WriteString(p.prefix)
		}
		out.WriteString(l)
		*p.mid = !strings.HasSuffix(l, "\n")
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
