package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestLeafMachines: two homes stand for two machines. relay invite on the
// team hub's prints a ticket; relay up --join TICKET --detach runs a leaf
// hub in the other home. Alice (team hub), Bob and Carol (leaf) are wrapped
// shells: they see each other in relay agents and their screen lines reach
// the other side once; relay invite --revoke cuts the leaf off, and Bob and
// Carol keep talking. (The team hub going down and coming back is
// bus.TestLeafTeam.)
func TestLeafMachines(t *testing.T) {
	t.Parallel()
	teamHome := filepath.Join(t.TempDir(), "team")
	team := hubtest.StartAt(t, teamHome, "127.0.0.1:0")
	teamEnv := append(baseEnv(t), "RELAY_HOME="+teamHome, "RELAY_HUB="+team.URL(), "RELAY_TOKEN="+team.Token(),
		"TERM=xterm-256color", "PS1=$ ")
	leafHome := filepath.Join(t.TempDir(), "leaf")
	leafEnv := append(baseEnv(t), "RELAY_HOME="+leafHome, "TERM=xterm-256color", "PS1=$ ")

	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(relayBin, args...)
		cmd.Env = env
		out, err := runWithin(t, cmd, 20*time.Second)
		if err != nil {
			t.Fatalf("relay %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cmd := exec.Command(relayBin, "invite", "--name", "laptop")
	cmd.Env = teamEnv
	ticket, err := cmd.Output()
	if err != nil {
		t.Fatalf("relay invite: %v", err)
	}
	run(leafEnv, "up", "--join", strings.TrimSpace(string(ticket)), "--detach", "--dashboard", "off")
	t.Cleanup(func() {
		cmd := exec.Command(relayBin, "down")
		cmd.Env = leafEnv
		_, _ = runWithin(t, cmd, 20*time.Second)
	})

	term := func(env []string, name string) *ptytest.Term {
		return ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30},
			relayBin, "wrap", "--name", name, "--", "bash", "--norc", "--noprofile")
	}
	alice, bob, carol := term(teamEnv, "Alice"), term(leafEnv, "Bob"), term(leafEnv, "Carol")
	for _, env := range [][]string{teamEnv, leafEnv} {
		testutil.Eventually(t, func() error {
			cmd := exec.Command(relayBin, "agents")
			cmd.Env = env
			out, err := runWithin(t, cmd, 20*time.Second)
			if err != nil {
				return err
			}
			for _, n := range []string{"Alice", "Bob", "Carol"} {
				if !strings.Contains(string(out), n) {
					return testutil.Errorf("%s not in:\n%s", n, out)
				}
			}
			return nil
		})
	}
	if out := run(teamEnv, "invite", "--list"); !strings.Contains(out, "laptop") || !strings.Contains(out, " up ") {
		t.Errorf("relay invite --list:\n%s", out)
	}

	alice.Type("echo '@relay:Bob from the team hub'\r")
	bob.WaitOutput(delivery.ShellText("from the team hub"), 30*time.Second)
	bob.Type("echo '@relay:Alice from the leaf'\r")
	alice.WaitOutput(delivery.ShellText("from the leaf"), 30*time.Second)
	run(leafEnv, "send", "--from", "Carol", "Alice", "by the CLI")
	alice.WaitOutput(delivery.ShellText("by the CLI"), 30*time.Second)

	if out := run(teamEnv, "invite", "--revoke", "laptop"); !strings.Contains(out, "revoked") {
		t.Errorf("relay invite --revoke: %s", out)
	}
	testutil.Eventually(t, func() error {
		if out := run(teamEnv, "invite", "--list"); strings.Contains(out, "laptop") {
			return testutil.Errorf("still listed:\n%s", out)
		}
		if team.LinkUp() {
			return testutil.Errorf("the revoked leaf's link is up")
		}
		return nil
	})
	bob.Type("echo '@relay:Carol after the revocation'\r")
	carol.WaitOutput(delivery.ShellText("after the revocation"), 30*time.Second)

	for _, c := range []struct {
		term *ptytest.Term
		text string
	}{{bob, "from the team hub"}, {alice, "from the leaf"}, {alice, "by the CLI"}, {carol, "after the revocation"}} {
		// Readline redraws what is typed, so count on the screen.
		if n := strings.Count(ptytest.Screen(t, c.term.Output(), 100, 30), delivery.ShellText(c.text)); n != 1 {
			t.Errorf("%q shows %d times", c.text, n)
		}
	}
}
