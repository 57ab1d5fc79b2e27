package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// buildDeploy builds examples/deploy once per test.
func buildDeploy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deploy")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, "github.com/relayhq/relay/examples/deploy")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/deploy: %v\n%s", err, out)
	}
	return bin
}

// pathWithout is $PATH without the folders that hold a relay binary, plus
// extra folders first.
func pathWithout(extra ...string) string {
	dirs := append([]string(nil), extra...)
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "relay")); err == nil {
			continue
		}
		dirs = append(dirs, d)
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// withEnv returns env with key set to value (replacing it).
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// processesOf counts the running processes whose executable is bin.
func processesOf(t *testing.T, bin string) int {
	t.Helper()
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	n := 0
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && strings.TrimSuffix(exe, " (deleted)") == want {
			n++
		}
	}
	return n
}

// hubPID reads the pid that hub.json records in home.
func hubPID(t *testing.T, home string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "hub", "hub.json"))
	if err != nil {
		return 0
	}
	i := strings.Index(string(b), `"pid":`)
	if i < 0 {
		return 0
	}
	s := strings.TrimSpace(string(b[i+len(`"pid":`):]))
	end := strings.IndexAny(s, ",\n}")
	pid, _ := strconv.Atoi(strings.TrimSpace(s[:end]))
	return pid
}

// TestGoExampleHub: examples/deploy, a Go program on the API, with no hub
// running never starts copies of itself. With no relay binary it runs the
// hub inside itself and says so; with relay on PATH it starts a detached
// relay hub; with a hub running it joins that one. Each time a message sent
// with relay send reaches its agent, and its @deploy: handler answers.
func TestGoExampleHub(t *testing.T) {
	bin := buildDeploy(t)
	relayDir := filepath.Dir(relayBin)
	cases := []struct {
		name    string
		path    string
		upFirst bool
		// hub says which process the hub must be: "deploy" or "relay".
		hub  string
		says string
	}{
		{name: "no relay binary", path: pathWithout(), hub: "deploy", says: "the hub runs inside this program"},
		{name: "relay on PATH", path: pathWithout(relayDir), hub: "relay"},
		{name: "hub running", path: pathWithout(), upFirst: true, hub: "relay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			e := withEnv(withEnv(baseEnv(t), "PATH", c.path), "RELAY_HOME", home)
			e = append(e, "TERM=xterm-256color")
			for _, k := range []string{"RELAY_HUB", "RELAY_TOKEN", "RELAY_NAME", "RELAY_WORKSPACE"} {
				e = withEnv(e, k, "")
			}
			rl := func(args ...string) (string, error) {
				cmd := exec.Command(relayBin, args...)
				cmd.Env = e
				out, err := runWithin(t, cmd, 20*time.Second)
				return string(out), err
			}
			t.Cleanup(func() { _, _ = rl("down") })
			var upPID int
			if c.upFirst {
				if out, err := rl("up", "--detach", "--dashboard", "off"); err != nil {
					t.Fatalf("relay up --detach: %v\n%s", err, out)
				}
				upPID = hubPID(t, home)
			}
			agent := ptytest.Start(t, ptytest.Options{Env: e, Cols: 120, Rows: 30},
				append([]string{bin, "--"}, script("@deploy:staging Release v1.2.3")...)...)
			agent.WaitOutput("got:  # [relay] Deployed Release v1.2.3 to staging.", 30*time.Second)
			if c.says != "" {
				agent.WaitOutput(c.says, time.Second)
			}
			testutil.Eventually(t, func() error {
				out, err := rl("agents")
				if err != nil {
					return fmt.Errorf("%v: %s", err, out)
				}
				if !strings.Contains(out, "sh ") {
					return fmt.Errorf("agent sh not listed:\n%s", out)
				}
				return nil
			})
			if out, err := rl("send", "sh", "hello from the human"); err != nil {
				t.Fatalf("relay send: %v\n%s", err, out)
			}
			agent.WaitOutput("hello from the human", 20*time.Second)

			if n := processesOf(t, bin); n != 1 {
				t.Errorf("%d processes run examples/deploy, want 1 (no copies of itself)", n)
			}
			pid := hubPID(t, home)
			switch c.hub {
			case "deploy":
				if pid != agent.Pid() {
					t.Errorf("hub pid %d, want the program's own %d", pid, agent.Pid())
				}
			case "relay":
				exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
				if want, _ := filepath.EvalSymlinks(relayBin); exe != want {
					t.Errorf("hub pid %d runs %q, want the relay binary %s", pid, exe, want)
				}
			}
			if c.upFirst && pid != upPID {
				t.Errorf("hub pid %d, want the hub that was running (%d)", pid, upPID)
			}
		})
	}
}

// TestAgentOwnRelayCommands: inside a wrapped shell, the relay commands
// act as the agent: relay send goes out from Alice (and past Alice's loop
// damping), relay memory save|search and relay agents work, the workspace
// token is not in the shell's environment and the identity file is 0600.
func TestAgentOwnRelayCommands(t *testing.T) {
	tm := newTeam(t)
	tm.env = withEnv(tm.env, "PATH", filepath.Dir(relayBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	bob := tm.agent("Bob", script()...)
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice", "Bob")

	alice.Type(`echo "token=${RELAY_TOKEN:-none} mode=$(stat -c %a "$RELAY_AGENT_FILE")"` + "\r")
	alice.WaitOutput("token=none mode=600", 10*time.Second)

	alice.Type("relay send Bob 'tests pass on main' && echo SENT-$((40+2))\r")
	alice.WaitOutput("SENT-42", 20*time.Second)
	bob.WaitOutput("Message from agent Alice", 20*time.Second)
	bob.WaitOutput("tests pass on main", 5*time.Second)
	testutil.Eventually(t, func() error {
		out, err := tm.relay("log", "--json")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "tests pass on main") {
				if !strings.Contains(line, `"from":"Alice"`) {
					return fmt.Errorf("the message is not from Alice: %s", line)
				}
				return nil
			}
		}
		return fmt.Errorf("message not in the log:\n%s", out)
	})

	alice.Type("relay send --from Bob Bob 'forged' || echo REFUSED-$((40+2))\r")
	alice.WaitOutput("REFUSED-42", 20*time.Second)

	alice.Type("relay memory save 'staging needs the VPN #ops' && relay memory search VPN && echo MEM-$((40+2))\r")
	alice.WaitOutput("MEM-42", 20*time.Second)
	if out := string(alice.Output()); !strings.Contains(out, ", Alice) #ops") {
		t.Errorf("the memory search does not name Alice as the author:\n%s", out)
	}
	alice.Type("relay log || echo NOLOG-$((40+2))\r")
	alice.WaitOutput("NOLOG-42", 10*time.Second)
	if out := string(alice.Output()); !strings.Contains(out, "own credential may not") {
		t.Errorf("relay log inside the agent does not say why it is refused:\n%s", ptytest.Screen(t, alice.Output(), 100, 30))
	}
	alice.Type("relay agents && echo AGENTS-$((40+2))\r")
	alice.WaitOutput("AGENTS-42", 20*time.Second)
	if !strings.Contains(ptytest.Screen(t, alice.Output(), 100, 30), "Bob ") {
		t.Errorf("relay agents inside Alice does not list Bob:\n%s", ptytest.Screen(t, alice.Output(), 100, 30))
	}

	// The same damping as @relay: lines: 10 messages a minute to one peer
	// (one went out above, so the tenth of these is held).
	alice.Type(`for i in 1 2 3 4 5 6 7 8 9 10; do relay send Bob "ping $i" >/dev/null 2>&1 || echo "HELD:$i"; done; echo LOOP-$((40+2))` + "\r")
	alice.WaitOutput("LOOP-42", 60*time.Second)
	out := string(alice.Output())
	if !strings.Contains(out, "HELD:10") || strings.Contains(out, "HELD:9") {
		t.Errorf("want only the 10th send held by the loop damping:\n%s", ptytest.Screen(t, alice.Output(), 100, 30))
	}
}
