package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// sendRun is a relay command started in the background, its stdout and
// stderr apart.
type sendRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

// start runs a relay command against the team's hub, in the background.
func (tm *team) start(args ...string) *sendRun {
	tm.t.Helper()
	r := &sendRun{cmd: exec.Command(relayBin, args...), done: make(chan error, 1)}
	r.cmd.Env = tm.env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		tm.t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	tm.t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	return r
}

// wait returns the command's exit code once it ended, within d.
func (r *sendRun) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case err := <-r.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		t.Fatalf("%v still running after %v: stdout %q stderr %q", r.cmd.Args, d, r.stdout.String(), r.stderr.String())
		return -1
	}
}

// stagesOf returns the stages relay log --id ID --json shows, in order.
func (tm *team) stagesOf(id string) []string {
	tm.t.Helper()
	out, err := tm.relay("log", "--json", "--id", id)
	if err != nil {
		tm.t.Fatalf("relay log: %v\n%s", err, out)
	}
	var e struct {
		Stages []struct {
			Stage string    `json:"stage"`
			At    time.Time `json:"at"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		tm.t.Fatalf("relay log --json: %v\n%s", err, out)
	}
	var st []string
	var last time.Time
	for _, s := range e.Stages {
		if s.At.Before(last) {
			tm.t.Errorf("stage %s at %v, before the stage before it (%v)", s.Stage, s.At, last)
		}
		last = s.At
		st = append(st, s.Stage)
	}
	return st
}

// TestSendWaitShell: relay send --wait seen returns once the wrapped shell
// read the typed line, --wait answered prints the shell's answer, and a
// shell busy with a command makes --wait seen time out naming the hold.
func TestSendWaitShell(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	bob := tm.agent("Bob", "bash", "--norc", "--noprofile")
	tm.waitAgents("Bob")

	seen := tm.start("send", "--from", "tester", "--wait", "seen", "--json", "Bob", "are you there?")
	if code := seen.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("--wait seen: exit %d: %s %s", code, seen.stdout.String(), seen.stderr.String())
	}
	dec := json.NewDecoder(&seen.stdout)
	var sent struct{ ID string }
	var res struct {
		Reached    bool
		Recipients []struct{ Agent, Stage, Reason string }
	}
	if err := dec.Decode(&sent); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Reached || len(res.Recipients) != 1 || res.Recipients[0].Stage != "seen" || res.Recipients[0].Reason != "read by the shell" {
		t.Fatalf("--wait seen: %+v, want Bob seen, read by the shell", res)
	}
	if got := strings.Join(tm.stagesOf(sent.ID), " "); got != "queued delivered seen" {
		t.Errorf("stages %q, want queued delivered seen", got)
	}

	// Answered: the shell writes to the sender after it saw the question.
	ask := tm.start("send", "--from", "tester", "--wait", "answered", "Bob", "what is 6*7?")
	bob.WaitOutput("what is 6", 20*time.Second)
	bob.Type("echo '@relay:tester forty-two'\r")
	if code := ask.wait(t, 30*time.Second); code != 0 || ask.stdout.String() != "forty-two\n" {
		t.Fatalf("--wait answered: exit %d, stdout %q, stderr %q; want forty-two", code, ask.stdout.String(), ask.stderr.String())
	}

	// Held: the shell runs a command; the message waits for its prompt.
	bob.Type("sh -c 'echo RUN''NING; exec sleep 30'\r")
	bob.WaitOutput("RUNNING", 10*time.Second)
	held := tm.start("send", "--from", "tester", "--wait", "seen", "--timeout", "5s", "Bob", "still there?")
	code := held.wait(t, 30*time.Second)
	if want := "not seen within 5s: held (the terminal is in use by "; code != 1 || !strings.Contains(held.stderr.String(), want) {
		t.Fatalf("--wait seen while busy: exit %d, stderr %q; want exit 1 and %q", code, held.stderr.String(), want)
	}
}

// askSixTimesSeven is the question relay send --wait answered asks in
// TestThreeCLIs; answerSixTimesSeven is the mock models' answer to it.
const askSixTimesSeven = "what is 6*7?"

func answerSixTimesSeven(r mockmodel.Request) (mockmodel.Reply, bool) {
	if strings.Contains(r.LastUser, "what is 6*7") {
		return mockmodel.Reply{Text: "@relay:tester forty-two"}, true
	}
	return mockmodel.Reply{}, false
}

// checkSendWait asks who, a CLI whose model answers askSixTimesSeven,
// with relay send --wait answered: the answer is printed, and the log
// shows the message seen (the CLI's own record held the prompt) and
// answered.
func (tm *team) checkSendWait(who string, term *agenttest.Term) {
	t := tm.t
	t.Helper()
	ask := tm.start("send", "--from", "tester", "--wait", "answered", "--json", who, askSixTimesSeven)
	if code := ask.wait(t, 90*time.Second); code != 0 {
		agents, _ := tm.relay("agents")
		cols, rows := term.Size()
		t.Fatalf("%s: --wait answered: exit %d, stdout %q, stderr %q\nrelay agents:\n%s\n%s's screen:\n%s\nlogs:\n%s", who, code,
			ask.stdout.String(), ask.stderr.String(), agents, who, agenttest.TmuxScreen(t, term.Raw(), cols, rows), tm.wrapperLog())
	}
	dec := json.NewDecoder(&ask.stdout)
	var sent struct{ ID string }
	var res struct {
		Recipients []struct{ Answer string }
	}
	if err := dec.Decode(&sent); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Recipients) != 1 || res.Recipients[0].Answer != "forty-two" {
		t.Errorf("%s: --wait answered: %+v, want forty-two", who, res)
	}
	// Seen comes from the CLI's file, read every 100 ms: it may be
	// stored after the answer.
	testutil.Eventually(t, func() error {
		if got := strings.Join(tm.stagesOf(sent.ID), " "); got != "queued delivered seen answered" && got != "queued delivered answered seen" {
			return testutil.Errorf("%s: stages %q, want queued delivered seen answered", who, got)
		}
		return nil
	})
}
