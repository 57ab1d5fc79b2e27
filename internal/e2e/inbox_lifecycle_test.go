package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// holdingProject is a project whose MessageReceived hook holds every
// message while the file hold exists (and notes each message it saw in
// seen), with extra configuration after it.
func holdingProject(t *testing.T, hold, seen, extra string) string {
	t.Helper()
	return project(t, fmt.Sprintf(`
[[hooks.MessageReceived]]
[[hooks.MessageReceived.hooks]]
command = '''cat >> %s; echo >> %s; if [ -e %s ]; then echo "{\"hold\": true}"; fi'''
%s`, shellQuote(seen), shellQuote(seen), shellQuote(hold), extra))
}

// agentOffline polls relay agents until name is listed offline (a killed
// wrapper's claim has aged out), so that the name can be taken again.
func (tm *team) agentOffline(name string) {
	tm.t.Helper()
	testutil.WaitFor(tm.t, 30*time.Second, 100*time.Millisecond, func() error {
		p, err := tm.presence(name)
		if err != nil {
			return err
		}
		if p.State != bus.StateOffline {
			return fmt.Errorf("%s is %s", name, p.State)
		}
		return nil
	})
}

// presence is name's line of relay agents --json.
func (tm *team) presence(name string) (bus.Presence, error) {
	out, err := tm.relay("agents", "--json")
	if err != nil {
		return bus.Presence{}, fmt.Errorf("relay agents: %v\n%s", err, out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var p bus.Presence
		if err := dec.Decode(&p); err != nil {
			return p, fmt.Errorf("relay agents --json: %v\n%s", err, out)
		}
		if p.Name == name {
			return p, nil
		}
	}
	return bus.Presence{}, fmt.Errorf("%s not listed:\n%s", name, out)
}

// TestInboxSessionsOfOneName is issue 29's deaf inbox: six sessions of one
// name, ended by SIGKILL with messages pending, by a hook holding them and
// a clean exit, and cleanly, with messages sent between and during them.
// Every message is typed in exactly once, in order. (The third session
// found its durable consumer in a shape it could not update and its inbox
// stopped for good, while relay agents and doctor said all was well.)
func TestInboxSessionsOfOneName(t *testing.T) {
	tm := newTeam(t)
	tmp := t.TempDir()
	file, hold, seen := filepath.Join(tmp, "bob.txt"), filepath.Join(tmp, "hold"), filepath.Join(tmp, "seen")
	dir := holdingProject(t, hold, seen, "")
	human := tm.sender("human")
	var bodies []string
	send := func(prefix string, n int) []string {
		b := numbered(prefix, 0, n)
		for _, body := range b {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := human.Send(ctx, "Bob", body)
			cancel()
			if err != nil && !errors.Is(err, bus.ErrUnknownAgent) { // waits for Bob's first session
				t.Fatalf("send %s: %v", body, err)
			}
		}
		bodies = append(bodies, b...)
		return b
	}
	typed := func(want []string) {
		t.Helper()
		testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			if n := len(typedOrder(file, want)); n < len(want) {
				return fmt.Errorf("%d of %d messages typed in:\n%s", n, len(want), tm.wrapperLog())
			}
			return nil
		})
	}
	sawAll := func(want []string) { // the hook saw (and held) each
		t.Helper()
		testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			data, _ := os.ReadFile(seen)
			for _, b := range want {
				if !strings.Contains(string(data), b) {
					return fmt.Errorf("the hook has not seen %s yet", b)
				}
			}
			return nil
		})
	}
	for i, end := range []string{"kill", "clean", "hold", "clean", "kill", "clean"} {
		before := send(fmt.Sprintf("s%d-%s-before", i, end), 3)
		if end != "clean" {
			if err := os.WriteFile(hold, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bob := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
			relayBin, "wrap", "--name", "Bob", "--", "sh", "-c", readerScript, "reader", file)
		tm.waitAgents("Bob")
		during := send(fmt.Sprintf("s%d-%s-during", i, end), 2)
		if end == "clean" {
			typed(bodies) // everything so far, held or killed before included
		} else {
			sawAll(append(before, during...))
		}
		switch end {
		case "kill":
			bob.Signal(syscall.SIGKILL)
			bob.Wait(10 * time.Second)
			tm.agentOffline("Bob")
		default:
			bob.Signal(syscall.SIGTERM)
			bob.Wait(10 * time.Second)
		}
		if err := os.Remove(hold); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// One last session gets what the last one left, and a sentinel: once
	// it is in, any copy delivered again had its chance to be typed.
	ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		relayBin, "wrap", "--name", "Bob", "--", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("Bob")
	send("last", 1)
	typed(bodies)
	checkOnceInOrder(t, typedOrder(file, bodies), bodies)
}

// TestInboxConsumerDeletedLive deletes a live wrapper's durable consumer
// (as an operator with the workspace token might): what is sent afterwards
// is typed in within 30 s, and nothing typed before comes again.
func TestInboxConsumerDeletedLive(t *testing.T) {
	tm := newTeam(t)
	file := filepath.Join(t.TempDir(), "dan.txt")
	tm.agent("Dan", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("Dan")
	human := tm.sender("human")
	bodies := numbered("deleted-before", 0, 3)
	sendAll(t, human, "Dan", bodies)
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := len(typedOrder(file, bodies)); n < len(bodies) {
			return fmt.Errorf("%d of %d typed", n, len(bodies))
		}
		return nil
	})

	nc, err := nats.Connect(tm.hub.URL(), nats.Token(tm.hub.Token()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteConsumer(ctx, bus.StreamName(bus.DefaultWorkspace), "Dan"); err != nil {
		t.Fatal(err)
	}
	after := numbered("deleted-after", 0, 3)
	sendAll(t, human, "Dan", after)
	bodies = append(bodies, after...)
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := len(typedOrder(file, after)); n < len(after) {
			return fmt.Errorf("%d of %d sent after the consumer was deleted typed in", n, len(after))
		}
		return nil
	})
	checkOnceInOrder(t, typedOrder(file, bodies), bodies)
	if log := tm.wrapperLog(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "inbox stopped; rebuilding it") {
		t.Errorf("the wrapper's log does not say at ERROR that the inbox stopped:\n%s", log)
	}
}

// TestStuckMessageReported: a message a hook holds longer than a short
// delivery.stuck_after is reported: relay agents shows the agent stuck
// with the oldest message's age, the sender gets a stuck receipt with the
// reason, and relay doctor fails naming the agent. Once the hold ends the
// message goes in and the agent is no longer stuck.
func TestStuckMessageReported(t *testing.T) {
	tm := newTeam(t)
	tmp := t.TempDir()
	file, hold, seen := filepath.Join(tmp, "carol.txt"), filepath.Join(tmp, "hold"), filepath.Join(tmp, "seen")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := holdingProject(t, hold, seen, "[delivery]\nstuck_after = \"1s\"\n")
	ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		relayBin, "wrap", "--name", "Carol", "--", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("Carol")
	out, err := tm.relay("send", "--json", "--from", "Alice", "Carol", "stuck-1")
	if err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	var env bus.Envelope
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("relay send --json: %v\n%s", err, out)
	}

	testutil.WaitFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		p, err := tm.presence("Carol")
		if err != nil {
			return err
		}
		if p.State != bus.StateStuck || p.OldestWait < time.Second || !strings.Contains(p.StuckReason, "MessageReceived hook") {
			return fmt.Errorf("Carol: %+v, want stuck for 1 s or more, held by a hook", p)
		}
		return nil
	})
	testutil.WaitFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		out, err := tm.relay("log", "--json", "--id", env.ID)
		if err != nil {
			return fmt.Errorf("relay log: %v\n%s", err, out)
		}
		var e bus.Entry
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			return fmt.Errorf("relay log --json: %v\n%s", err, out)
		}
		if e.Status["Carol"] != bus.StatusStuck || !strings.Contains(e.Reasons["Carol"], "held by a MessageReceived hook") {
			return fmt.Errorf("status %v, reasons %v: want Carol stuck, held by a hook", e.Status, e.Reasons)
		}
		return nil
	})
	cmd := exec.Command(relayBin, "doctor", "--json")
	cmd.Env, cmd.Dir = tm.env, dir
	dout, derr := runWithin(t, cmd, 60*time.Second)
	if derr == nil || !strings.Contains(string(dout), `"inbox Carol"`) || !strings.Contains(string(dout), "Carol is stuck") {
		t.Errorf("relay doctor: %v, want a failure naming Carol stuck:\n%s", derr, dout)
	}

	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if len(typedOrder(file, []string{"stuck-1"})) == 0 {
			return fmt.Errorf("stuck-1 not typed in yet")
		}
		p, err := tm.presence("Carol")
		if err != nil {
			return err
		}
		if p.State == bus.StateStuck {
			return fmt.Errorf("Carol still stuck: %+v", p)
		}
		return nil
	})
}

// TestInboxAfterHubKilled: the hub (a relay up process) is killed with
// SIGKILL under a live wrapper and started again on the same storage:
// what is sent afterwards is typed in, each message once, in order.
func TestInboxAfterHubKilled(t *testing.T) {
	hp := startHubProc(t)
	file := filepath.Join(t.TempDir(), "K.txt")
	hp.agent("BK", "sh", "-c", readerScript, "reader", file)
	hp.waitAgents("BK")
	bodies := numbered("hubkill-before", 0, 3)
	sendAll(t, hp.sender("human"), "BK", bodies)
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := len(typedOrder(file, bodies)); n < len(bodies) {
			return fmt.Errorf("%d of %d typed", n, len(bodies))
		}
		return nil
	})
	pid := hp.pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("hub %d still alive", pid)
		}
		return nil
	})
	hp.up()
	after := numbered("hubkill-after", 0, 3)
	sendAll(t, hp.sender("human2"), "BK", after)
	bodies = append(bodies, after...)
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if n := len(typedOrder(file, after)); n < len(after) {
			return fmt.Errorf("%d of %d sent after the hub's SIGKILL typed in", n, len(after))
		}
		return nil
	})
	checkOnceInOrder(t, typedOrder(file, bodies), bodies)
}
