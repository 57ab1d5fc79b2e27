package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// screenMarkerScript is markerScript for Codex and Gemini CLI: asked to
// "make NAME", the model runs `touch NAME` through the CLI's shell tool (for
// Codex with escalated permissions, so that it asks its human).
func screenMarkerScript(kind string) mockmodel.Script {
	return func(r mockmodel.Request) mockmodel.Reply {
		_, name, ok := strings.Cut(r.LastUser, "make ")
		if !ok || strings.Contains(r.LastUser, "[relay]") {
			return mockmodel.Reply{Text: "OK."}
		}
		name = strings.Fields(name)[0]
		tool := mockmodel.ToolUse{Name: "run_shell_command", Input: map[string]any{"command": "touch " + name, "description": "make " + name}}
		if kind == "codex" {
			tool = mockmodel.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": "touch " + name,
				"sandbox_permissions": "require_escalated", "justification": "make " + name}}
		}
		return mockmodel.Reply{Text: "Making " + name + ".", ToolUse: &tool}
	}
}

// screenBlocked has a screen CLI make a marker file and waits until its
// approval dialog is up and the hub lists it blocked on that command.
func (tm *team) screenBlocked(a *screenCLI, marker string) {
	tm.t.Helper()
	a.submit(tm.t, "make "+marker)
	if _, err := a.term.WaitScreen(30*time.Second, approvalShown); err != nil {
		tm.t.Fatalf("no approval dialog: %v\n%s", err, a.screen(tm.t))
	}
	testutil.Eventually(tm.t, func() error {
		p, err := tm.presence(a.name)
		if err != nil {
			return err
		}
		if p.State != bus.StateBlocked || p.Ask == nil || p.Ask.Detail != "touch "+marker {
			return fmt.Errorf("%s is %s with prompt %+v, want blocked on touch %s", a.name, p.State, p.Ask, marker)
		}
		return nil
	})
}

// agentEnv is the environment relay wrap (process wrapper) gave its agent,
// read from the agent's own process: a relay command run with it is one
// the agent could run, with the agent's own credential (RELAY_AGENT_FILE)
// and without the workspace token.
func agentEnv(t *testing.T, wrapper int) []string {
	t.Helper()
	var env []string
	testutil.Eventually(t, func() error {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range stats {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			// pid (comm) state ppid …: comm may hold spaces and parentheses.
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			if len(f) < 2 || f[1] != strconv.Itoa(wrapper) {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
			if err != nil {
				continue
			}
			vars := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
			if slices.ContainsFunc(vars, func(kv string) bool { return strings.HasPrefix(kv, "RELAY_AGENT_FILE=") }) {
				env = vars
				return nil
			}
		}
		return fmt.Errorf("no child of relay wrap (pid %d) has RELAY_AGENT_FILE", wrapper)
	})
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "RELAY_TOKEN=") }) {
		t.Fatal("the agent's environment holds the workspace token")
	}
	return env
}

// approveAs runs relay approve NAME with env (an agent's environment).
func approveAs(t *testing.T, env []string, name string) (string, error) {
	t.Helper()
	cmd := exec.Command(relayBin, "approve", name)
	cmd.Env = env
	out, err := runWithin(t, cmd, 20*time.Second)
	return string(out), err
}

// TestApproveScreenCLI: Codex and Gemini CLI (their real binaries, the
// mock model asking for their shell tool) show an approval dialog; relay
// reads the prompt off the screen. Bob is blocked; a message for him is
// held and answers nothing (the command has not run, the model has not got
// it); relay approvals lists the tool, the command and the dialog's
// options; relay approve with Bob's own credential, and with his peer
// Carol's, is refused by the hub, and the dialog stays up, unanswered;
// relay approve (the workspace token) types the option's key while the dialog is up:
// the command runs, then the held message reaches the model. A second
// prompt denied with a reason gives the model the reason, and its command
// never runs. A third one the human cancels with Esc: Bob is no longer
// blocked and the next message reaches his model. (It replaced
// TestScreenCLIApprovalWaits, whose checks it makes on the same agent.)
func TestApproveScreenCLI(t *testing.T) {
	t.Parallel()
	for _, kind := range screenCLIs {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			tm := newTeam(t)
			var extra []string
			if kind == "codex" {
				// The harness's config says never: ask on request.
				extra = []string{"--ask-for-approval", "on-request", "--sandbox", "workspace-write"}
			}
			carol := tm.agent("Carol", "bash", "--norc", "--noprofile") // a peer
			bob := tm.screenCLISized(kind, "Bob", 0, 0, screenMarkerScript(kind), extra...)
			tm.waitAgents("Bob", "Carol")
			marker := func(name string) bool {
				_, err := os.Stat(filepath.Join(bob.work, name))
				return err == nil
			}

			tm.screenBlocked(bob, "marker1")
			turns := len(bob.model.Turns())
			const msg = "please rotate the deploy keys after the freeze"
			if out, err := tm.relay("send", "--from", "Alice", "Bob", msg); err != nil {
				t.Fatalf("relay send: %v: %s", err, out)
			}
			tm.waitHeld(msg, "blocked: ")
			list, err := tm.approvals()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Agent != "Bob" || list[0].Tool == "" || list[0].Detail != "touch marker1" ||
				!strings.Contains(string(list[0].Input), `"touch marker1"`) || len(list[0].Options) != 2 || list[0].Since.IsZero() {
				t.Fatalf("relay approvals: %+v, want Bob's touch marker1 with allow and deny", list)
			}
			t.Logf("relay approvals: %+v", list[0])
			if out, err := tm.relay("agents"); err != nil || !strings.Contains(out, "blocked ("+list[0].Tool+": touch marker1)") {
				t.Errorf("relay agents: %v:\n%s\nwant Bob blocked (%s: touch marker1)", err, out, list[0].Tool)
			}

			// Only humans answer: an agent's credential, its own or a
			// peer's, is refused by the hub, and nothing reaches the dialog.
			for _, who := range []struct {
				name string
				pid  int
			}{{"Bob", bob.term.Pid()}, {"Carol", carol.Pid()}} {
				out, err := approveAs(t, agentEnv(t, who.pid), "Bob")
				want := "inside agent " + who.name + ", relay acts with " + who.name + "'s own credential"
				if err == nil || !strings.Contains(out, "refused") || !strings.Contains(out, want) {
					t.Fatalf("relay approve Bob as %s: %v: %q, want refused: %s", who.name, err, out, want)
				}
				t.Logf("relay approve Bob as %s: %s", who.name, strings.TrimSpace(out))
			}
			if after, err := tm.approvals(); err != nil || len(after) != 1 || after[0].ID != list[0].ID {
				t.Fatalf("after the agents' approve: prompts %+v (%v), want %s still pending", after, err, list[0].ID)
			}
			if s := bob.screen(t); !approvalShown(s) || strings.Contains(s, "deploy keys") || marker("marker1") || len(bob.model.Turns()) != turns {
				t.Fatalf("the held message or an agent's approve answered the dialog (marker1 made: %v, turns %d, want %d):\n%s\nlogs:\n%s",
					marker("marker1"), len(bob.model.Turns()), turns, s, tm.wrapperLog())
			}

			if out, err := tm.relay("approve", "Bob"); err != nil || !strings.Contains(out, "allowed "+list[0].Tool+": touch marker1") {
				t.Fatalf("relay approve Bob: %v: %s\nlogs:\n%s", err, out, tm.wrapperLog())
			}
			req := bob.waitTurn(t, msg, 60*time.Second)
			if !marker("marker1") {
				t.Error("the approved command did not run")
			}
			if strings.Contains(req.LastUser, "make marker1") {
				t.Errorf("the message was merged into the approved turn: %q", req.LastUser)
			}
			if req.Turn < turns+2 || bob.turnsWith(msg) != 1 {
				t.Errorf("the message came in turn %d, %d times; want once, after the tool's result (turn %d)", req.Turn, bob.turnsWith(msg), turns+1)
			}
			bob.waitIdle(t)
			tm.waitState("Bob", bus.StateIdle)

			tm.screenBlocked(bob, "marker2")
			if out, err := tm.relay("approve", "Bob", "--deny", "--reason", "no markers on Fridays"); err != nil {
				t.Fatalf("relay approve --deny: %v: %s", err, out)
			}
			bob.waitTurn(t, "no markers on Fridays", 60*time.Second)
			if marker("marker2") {
				t.Error("the denied command ran")
			}
			bob.waitIdle(t)
			tm.waitState("Bob", bus.StateIdle)

			tm.screenBlocked(bob, "marker3")
			bob.term.Write([]byte("\x1b")) // the human cancels
			tm.waitState("Bob", bus.StateIdle)
			if list, err := tm.approvals(); err != nil || len(list) != 0 {
				t.Errorf("after Esc: prompts %+v (%v), want none", list, err)
			}
			const next = "the freeze is over, carry on"
			if out, err := tm.relay("send", "--from", "Alice", "Bob", next); err != nil {
				t.Fatalf("relay send: %v: %s", err, out)
			}
			bob.waitTurn(t, next, 60*time.Second)
			if marker("marker3") {
				t.Error("the cancelled command ran")
			}
		})
	}
}
