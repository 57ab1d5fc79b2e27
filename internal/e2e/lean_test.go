package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// leanHome is a RELAY_HOME of its own for the lean relay at bin, with no
// hub named (relay wrap finds or starts the home's hub).
type leanHome struct {
	t    *testing.T
	bin  string
	home string
	env  []string
}

func newLeanHome(t *testing.T, bin string) *leanHome {
	home := filepath.Join(t.TempDir(), "home")
	return &leanHome{t: t, bin: bin, home: home, env: append(baseEnv(t),
		"RELAY_HOME="+home, "RELAY_HUB=", "RELAY_TOKEN=", "TERM=xterm-256color", "PS1=$ ")}
}

// relay runs a relay command of the lean binary in the home.
func (lh *leanHome) relay(args ...string) (string, error) {
	cmd := exec.Command(lh.bin, args...)
	cmd.Env = lh.env
	out, err := runWithin(lh.t, cmd, 60*time.Second)
	return string(out), err
}

func (lh *leanHome) wrap(name string, argv ...string) *ptytest.Term {
	return ptytest.Start(lh.t, ptytest.Options{Env: lh.env, Cols: 100, Rows: 30},
		append([]string{lh.bin, "wrap", "--name", name, "--"}, argv...)...)
}

// waitAgents waits until relay agents lists every name.
func (lh *leanHome) waitAgents(names ...string) {
	lh.t.Helper()
	testutil.WaitFor(lh.t, 60*time.Second, 100*time.Millisecond, func() error {
		out, err := lh.relay("agents")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		for _, n := range names {
			if !strings.Contains(out, n) {
				return fmt.Errorf("%s not in:\n%s", n, out)
			}
		}
		return nil
	})
}

// exeOf is the program process pid runs, symbolic links resolved.
func exeOf(t *testing.T, pid int) string {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func resolved(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLeanPair runs the pair `make install` installs: the lean relay
// (which links no hub) on PATH, the full one beside it as relay-hub
// (issue 34).
func TestLeanPair(t *testing.T) {
	lean := leanRelay(t)

	// Two lean wrappers on a hub that `relay up` (run by the lean relay
	// in relay-hub) started: a line of Alice's reaches Bob once, and the
	// wrappers are the lean binary itself.
	t.Run("wrap and send", func(t *testing.T) {
		t.Parallel()
		lh := newLeanHome(t, lean)
		if out, err := lh.relay("up", "--detach", "--dashboard", "off"); err != nil {
			t.Fatalf("relay up --detach: %v\n%s", err, out)
		}
		t.Cleanup(func() { _, _ = lh.relay("down") })
		alice := lh.wrap("Alice", "bash", "--norc", "--noprofile")
		bob := lh.wrap("Bob", script()...)
		lh.waitAgents("Alice", "Bob")
		for _, term := range []*ptytest.Term{alice, bob} {
			if got := exeOf(t, term.Pid()); got != resolved(t, lean) {
				t.Errorf("wrapper runs %s, want the lean %s", got, lean)
			}
		}
		alice.Type("echo '@relay:Bob hello from a lean wrapper'\r")
		bob.WaitOutput("got:  # [relay] Message from agent Alice", 60*time.Second)
		bob.WaitOutput("hello from a lean wrapper", 10*time.Second)
		if n := count(bob.Output(), "got:  # [relay] Message from agent Alice"); n != 1 {
			t.Errorf("Bob got it %d times", n)
		}
	})

	// With no hub running, the lean wrapper starts one as relay wrap
	// always did (`relay up --detach`, which the lean relay hands to
	// relay-hub), and joins it.
	t.Run("wrap starts the hub", func(t *testing.T) {
		t.Parallel()
		lh := newLeanHome(t, lean)
		t.Cleanup(func() { _, _ = lh.relay("down") })
		alice := lh.wrap("Alice", "bash", "--norc", "--noprofile")
		lh.waitAgents("Alice")
		if got := exeOf(t, alice.Pid()); got != resolved(t, lean) {
			t.Errorf("wrapper runs %s, want the lean %s", got, lean)
		}
		ep, err := hub.Discover(lh.home)
		if err != nil {
			t.Fatal(err)
		}
		hubExe := exeOf(t, hubPID(t, lh.home))
		if want := resolved(t, filepath.Join(filepath.Dir(lean), "relay-hub")); hubExe != want {
			t.Errorf("hub %s runs %s, want relay-hub (%s)", ep.URL, hubExe, want)
		}
	})

	// Alone, the lean relay says which file is missing and how to
	// install it, for a hub-side command and for a wrap with no hub to
	// join; what it has itself works.
	t.Run("without relay-hub", func(t *testing.T) {
		t.Parallel()
		alone := filepath.Join(t.TempDir(), "relay")
		copyFile(t, lean, alone)
		lh := newLeanHome(t, alone)
		if out, err := lh.relay("version"); err != nil {
			t.Errorf("relay version: %v\n%s", err, out)
		}
		missing := filepath.Join(filepath.Dir(alone), "relay-hub")
		for _, args := range [][]string{
			{"up", "--detach"},
			{"dashboard"},
			{"wrap", "--name", "Alice", "--", "true"},
		} {
			out, err := lh.relay(args...)
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 1 || !strings.Contains(out, missing) || !strings.Contains(out, "make install") {
				t.Errorf("relay %s: exit %d (%v), want 1 and the missing %s with how to install it:\n%s",
					strings.Join(args, " "), code, err, missing, out)
			}
		}
		if _, err := hub.Discover(lh.home); err == nil {
			t.Error("a hub runs, without relay-hub")
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Link(from, to); err == nil {
		return
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
