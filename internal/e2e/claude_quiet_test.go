package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestClaudeLostStopHook: Claude Code kills a hook that outruns its time
// limit, so on a loaded machine relay's Stop hook can be lost. Here every
// hook from the middle of Bob's turn on is lost: his hook socket is moved
// away while his model works, so `relay hook Stop` finds no wrapper. Before,
// Bob stayed busy for good and a message to him was never typed. Now the
// screen says when a turn the hooks left silent ends: the broadcast in his
// reply reaches Alice, once, and a message sent to him afterwards reaches his
// model.
func TestClaudeLostStopHook(t *testing.T) {
	tm := newTeam(t)
	gate := make(chan struct{})
	bob := tm.claude("Bob", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "long task") {
			return mockmodel.Reply{Text: "Done.\n\n@broadcast: the long task is finished", Gate: gate}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice", "Bob")
	t.Cleanup(func() {
		if t.Failed() {
			home := ""
			for _, kv := range tm.env {
				if v, ok := strings.CutPrefix(kv, "RELAY_HOME="); ok {
					home = v
				}
			}
			log, _ := os.ReadFile(filepath.Join(home, "logs", "wrap-Bob.log"))
			t.Logf("Bob's wrapper log:\n%s\nscreen:\n%s", log, agenttest.TmuxScreen(t, bob.term.Raw(), 100, 30))
		}
	})
	bob.term.Submit("start the long task")
	bob.waitTurn(t, "long task", 60*time.Second)

	// Bob's turn began with his hooks (UserPromptSubmit): lose the rest.
	var sock string
	for _, kv := range agentEnv(t, bob.term.Pid()) {
		if v, ok := strings.CutPrefix(kv, hookrpc.SocketEnv+"="); ok {
			sock = v
		}
	}
	if sock == "" {
		t.Fatal("Bob's Claude Code has no hook socket")
	}
	if err := os.Rename(sock, sock+".away"); err != nil {
		t.Fatal(err)
	}
	close(gate)

	testutil.WaitFor(t, 120*time.Second, 200*time.Millisecond, func() error {
		n := 0
		for _, e := range tm.logEntries() {
			if strings.Contains(fmt.Sprint(e["body"]), "the long task is finished") {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("the broadcast in Bob's reply is in the log %d times, want once", n)
		}
		return nil
	})
	alice.WaitOutput("the long task is finished", 30*time.Second)
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "the staging database is back"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	bob.waitTurn(t, "the staging database is back", 120*time.Second)
	if n := bob.model.Count("the staging database is back"); n != 1 {
		t.Errorf("Bob's model got the message %d times, want once", n)
	}
}
