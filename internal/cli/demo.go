//go:build !lean

package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// demoAgent is one scripted agent of the demo: a shell loop that reads the
// messages relay types into it and answers with @relay: lines.
type demoAgent struct {
	name, script string
}

func demoAgents() []demoAgent {
	return []demoAgent{
		{"Alice", `echo "Alice: I need the tests run and a review."
printf "%s\n\n" "@relay:Bob Hi Bob, please run the integration tests on main and tell me what fails."
n=0
while IFS= read -r line; do
  case "$line" in
    *"from agent Bob"*) printf "%s\n\n" "@relay:Carol Bob says all 42 tests pass. Can you review the auth change?" ;;
    *"from agent Carol"*) printf "%s\n\n" "@broadcast: Review done, merging the auth change. Thanks both!" ;;
  esac
done`},
		{"Bob", `n=0
while IFS= read -r line; do
  case "$line" in
    *"from agent Alice"*) n=$((n+1)); [ $n -eq 1 ] && printf "%s\n\n" "@relay:Alice Ran 42 integration tests on main: all pass." ;;
  esac
done`},
		{"Carol", `n=0
while IFS= read -r line; do
  case "$line" in
    *"from agent Alice"*) n=$((n+1)); [ $n -eq 1 ] && printf "%s\n\n" "@relay:Alice Reviewed the auth change: looks good, one nit in token.go." ;;
  esac
done`},
	}
}

// demoDeliveries is how many deliveries the scripted conversation makes:
// four direct messages and a broadcast to two agents.
const demoDeliveries = 6

func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "demo", "[--team] [--timeout D]")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	fromFile := fs.Bool("team", false, "start the agents from a team file (.relay/team.toml), as relay team up does")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("demo takes no arguments")
	}
	dir, err := os.MkdirTemp("", "relay-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *fromFile {
		return runDemoTeam(ctx, env, dir, *timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	h, err := hub.Start(ctx, hub.Options{Home: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		return fmt.Errorf("start the demo's hub: %w", err)
	}
	defer h.Shutdown()
	fmt.Fprintf(env.Stdout, "relay demo: a hub at %s and three scripted agents (shell loops) that talk with @relay: lines.\n\n", h.URL())

	obs, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "demo"})
	if err != nil {
		return err
	}
	defer obs.Close()

	var out sync.Mutex
	var wg sync.WaitGroup
	var stdins []io.Closer
	start := time.Now()
	for _, a := range demoAgents() {
		cmd := exec.CommandContext(ctx, env.Executable, "wrap", "--hub", h.URL(), "--name", a.name, "--", "sh", "-c", a.script)
		cmd.Env = append(env.environ(), "RELAY_HOME="+filepath.Join(dir, a.name), "RELAY_TOKEN="+h.Token(), "RELAY_WORKSPACE=")
		in, err := cmd.StdinPipe()
		if err != nil {
			return err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", a.name, err)
		}
		stdins = append(stdins, in)
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := strings.TrimRight(sc.Text(), "\r")
				if line == "" {
					continue
				}
				out.Lock()
				fmt.Fprintf(env.Stdout, "%-6s│ %s\n", name, line)
				out.Unlock()
			}
			cmd.Wait()
		}(a.name)
	}

	entries, err := waitDemo(ctx, obs)
	elapsed := time.Since(start)
	for _, in := range stdins {
		in.Close() // the loops end at EOF
	}
	wg.Wait()
	fmt.Fprintln(env.Stdout)
	printDemoSummary(env.Stdout, entries, elapsed)
	if err != nil {
		return fmt.Errorf("the demo did not finish: %w", err)
	}
	fmt.Fprint(env.Stdout, `
Now wrap real agents, each in its own terminal:
  relay wrap --name Alice -- claude
  relay wrap --name Bob -- codex
They find each other through the hub that the first one starts.
Or start a whole team from one file: relay demo --team shows how.
`)
	return nil
}

// waitDemo polls the log until every delivery of the conversation has
// happened.
func waitDemo(ctx context.Context, c *bus.Client) ([]bus.Entry, error) {
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

func printDemoSummary(w io.Writer, entries []bus.Entry, elapsed time.Duration) {
	sent, delivered, other := 0, 0, 0
	for _, e := range entries {
		sent++
		names := make([]string, 0, len(e.Status))
		for n := range e.Status {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch e.Status[n] {
			case bus.StatusDelivered, bus.StatusSeen, bus.StatusAnswered:
				delivered++
			default:
				other++
			}
		}
	}
	fmt.Fprintf(w, "Summary: %d messages sent, %d deliveries typed in", sent, delivered)
	if other > 0 {
		fmt.Fprintf(w, ", %d not (yet)", other)
	}
	fmt.Fprintf(w, ", in %v.\n", elapsed.Round(10*time.Millisecond))
}
