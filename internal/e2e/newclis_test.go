package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestNewCLIs drives each CLI added by issue 36 with its real binary
// against the mock model, offline: relay doctor lists it with its version;
// wrapped as Alice it is detected as its own profile; a message from a
// wrapped shell reaches its model once; its model's reply line
// `@relay:Bob …` reaches Bob once, while the same command in a code block
// or escaped does not fire; a burst of 10 messages sent while it works
// arrives after its turn, each once.
func TestNewCLIs(t *testing.T) {
	for _, cli := range []struct{ kind, name string }{
		{"pi", "pi"},
		{"qwen", "Qwen Code"},
		{"opencode", "OpenCode"},
	} {
		t.Run(cli.kind, func(t *testing.T) {
			t.Parallel()
			testNewCLI(t, cli.kind, cli.name)
		})
	}
}

func testNewCLI(t *testing.T, kind, cliName string) {
	bin := agenttest.Binary(t, kind)
	pin, err := agenttest.Pin(kind)
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t)

	t.Run("doctor", func(t *testing.T) {
		cmd := exec.Command(relayBin, "doctor", "--json")
		cmd.Env = append(append([]string(nil), tm.env...), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		out, _ := runWithin(t, cmd, 60*time.Second)
		var rep struct {
			Agents []struct {
				Command, Version, Profile string
				OK                        bool
			}
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		for _, a := range rep.Agents {
			if a.Command == pin.Bin {
				if a.Profile != kind || !strings.Contains(a.Version, pin.Version) || !a.OK {
					t.Errorf("doctor says %+v; want profile %s, version %s, ok", a, kind, pin.Version)
				}
				return
			}
		}
		t.Errorf("doctor does not list %s:\n%s", pin.Bin, out)
	})

	const (
		longTask = "start the long task"
		ask      = "nk4 please check the build"
		reply    = "rq8 the build is green"
		fenced   = "fz1 must not fire"
		escaped  = "ez2 must not fire"
	)
	bob := tm.agent("Bob", script()...)
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	defer open() // a failed test does not leave the mock's handler waiting
	alice := tm.screenCLI(kind, "Alice", func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, longTask) {
			return mockmodel.Reply{Text: "Working on the long task.", Gate: gate}
		}
		if strings.Contains(r.LastUser, ask) {
			return mockmodel.Reply{Text: "Checked.\n\n```\n@relay:Bob " + fenced + "\n```\n\n\\@relay:Bob " + escaped +
				"\n\n@relay:Bob " + reply + "\n\nDone."}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Alice", "Bob")

	t.Run("profile", func(t *testing.T) {
		testutil.Eventually(t, func() error {
			out, err := tm.relay("agents")
			if err != nil {
				return err
			}
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[0] == "Alice" {
					if !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(line, "Alice")), cliName+" ") {
						return fmt.Errorf("Alice's CLI is not %q:\n%s", cliName, out)
					}
					return nil
				}
			}
			return fmt.Errorf("no Alice in:\n%s", out)
		})
	})

	bob.Type("@relay:Alice " + ask + "\r")
	alice.waitTurn(t, ask, 120*time.Second)
	bob.WaitOutput(delivery.ShellText(reply), 120*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := alice.model.WaitReplied(ctx, len(alice.model.Turns())); err != nil {
		t.Fatal(err)
	}
	// The exact text of the reply is read at the turn's end; a command that
	// fired twice or from the fence would arrive with the reply or just
	// after: the burst's turns come after it, so check once they are over
	// (a turn of its own for this cost an OpenCode run up to a minute).
	testBurst(t, tm, alice, longTask, open)
	if n := alice.turnsWith(ask); n != 1 {
		t.Errorf("Alice's model got the message %d times", n)
	}
	out := string(bob.Output())
	got := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "got: ") && strings.Contains(line, delivery.ShellText(reply)) {
			got++
		}
	}
	if n := got; n != 1 {
		t.Errorf("Bob got the reply %d times:\n%s", n, out)
	}
	for _, s := range []string{fenced, escaped} {
		if strings.Contains(out, delivery.ShellText(s)) {
			t.Errorf("%q fired:\n%s\n%s", s, out, tm.wrapperLog())
		}
	}
}

// testBurst: while alice works on longTask (its reply held until open is
// called), 10 messages sent to it wait; once its turn is over they reach
// its model, each once, none in the busy turn.
func testBurst(t *testing.T, tm *team, alice *screenCLI, longTask string, open func()) {
	alice.waitIdle(t)
	alice.submit(t, longTask)
	tm.waitState(alice.name, bus.StateBusy)
	burst := make([]string, 10)
	for i := range burst {
		burst[i] = fmt.Sprintf("burst-%02d-of-10", i+1)
		if out, err := tm.relay("send", alice.name, burst[i]); err != nil {
			t.Fatalf("relay send: %v\n%s", err, out)
		}
	}
	tm.waitHeld(burst[len(burst)-1], "busy:")
	for _, m := range burst {
		if n := alice.turnsWith(m); n != 0 {
			t.Fatalf("%s reached the model while it was busy\nscreen:\n%s", m, alice.screen(t))
		}
	}
	open()
	for _, m := range burst {
		alice.waitTurn(t, m, 90*time.Second)
	}
	alice.waitIdle(t)
	var busyTurn mockmodel.Request
	for _, r := range alice.model.Turns() {
		if strings.Contains(r.LastUser, longTask) {
			busyTurn = r
		}
	}
	for _, r := range alice.model.Turns() {
		for _, m := range burst {
			if strings.Contains(r.LastUser, m) && r.Seq <= busyTurn.Seq {
				t.Errorf("%s reached the model in or before the busy turn", m)
			}
		}
	}
	for _, m := range burst {
		if n := alice.turnsWith(m); n != 1 {
			t.Errorf("the model got %s %d times", m, n)
		}
	}
}
