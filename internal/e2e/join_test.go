package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/hub"
	"github.com/relayhq/relay/hub/hubtest"
	"github.com/relayhq/relay/internal/ptytest"
	"github.com/relayhq/relay/internal/testutil"
)

// childMark is what the wrapped child prints first: whatever relay said
// before it is said before the agent started.
const childMark = "CHILD-STARTED"

// childArgv is a child that says it started, then echoes what it is typed.
var childArgv = []string{"sh", "-c", `echo ` + childMark + `; while IFS= read -r l; do printf 'got: %s\n' "$l"; done`}

// TestWrapThatCannotJoinRefuses: a wrapper whose team refuses it for good
// (a state folder another user could have prepared, a token the hub
// refuses) says so on the human's terminal, with the fix, and does not
// start the agent cut off from its team.
func TestWrapThatCannotJoinRefuses(t *testing.T) {
	h := hubtest.Start(t)
	cases := []struct {
		name  string
		env   func(t *testing.T) []string
		wants []string
	}{
		{"hub folder others can write", func(t *testing.T) []string {
			home := filepath.Join(t.TempDir(), "home")
			if err := os.MkdirAll(hub.Dir(home), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(hub.Dir(home), 0o777); err != nil {
				t.Fatal(err)
			}
			return []string{"RELAY_HOME=" + home, "RELAY_HUB=", "RELAY_TOKEN="}
		}, []string{"cannot join its team", "can be written by others (mode 0777)", "fix: chmod 700 "}},
		{"token planted by someone else", func(t *testing.T) []string {
			home := filepath.Join(t.TempDir(), "home")
			if err := os.MkdirAll(hub.Dir(home), 0o700); err != nil {
				t.Fatal(err)
			}
			token := filepath.Join(hub.Dir(home), "token")
			if err := os.WriteFile(token, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(token, 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"RELAY_HOME=" + home, "RELAY_HUB=", "RELAY_TOKEN="}
		}, []string{"cannot join its team", "can be read or written by others (mode 0644)", "fix: rm "}},
		{"token refused", func(t *testing.T) []string {
			return []string{"RELAY_HOME=" + filepath.Join(t.TempDir(), "home"), "RELAY_HUB=" + h.URL(), "RELAY_TOKEN=not-the-token"}
		}, []string{"cannot join its team", "refused the token", "check RELAY_TOKEN"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := append(append(baseEnv(t), "TERM=xterm-256color"), tc.env(t)...)
			tm := ptytest.Start(t, ptytest.Options{Env: env, Cols: 200, Rows: 30},
				append([]string{relayBin, "wrap", "--name", "Alice", "--"}, childArgv...)...)
			for _, w := range tc.wants {
				tm.WaitOutput(w, 30*time.Second) // on the human's terminal
			}
			if code := tm.Wait(30 * time.Second); code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, tm.Output())
			}
			out := tm.Output()
			if bytes.Contains(out, []byte(childMark)) {
				t.Errorf("the agent started although it cannot join its team:\n%s", out)
			}
		})
	}
}

// smallDisk mounts a tmpfs of size for the test, or skips it where
// mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a %s tmpfs here (%v): the full-disk test needs root and mount rights", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes a file at path until the disk is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			return // the disk is full
		}
	}
}

// TestWrapOnAFullHubSaysSo is issue 21's full disk: a wrapper whose hub
// has no room to store its workspace starts the agent alone and says so on
// the human's terminal, with the fix, before the agent starts (its log
// cannot even be written); once space is freed it joins without a restart
// and messages reach it.
func TestWrapOnAFullHubSaysSo(t *testing.T) {
	disk := smallDisk(t, "4m")
	home := filepath.Join(disk, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	hp := &hubProc{t: t, home: home, env: append(baseEnv(t),
		"RELAY_HOME="+home, "RELAY_HUB=", "RELAY_TOKEN=", "TERM=xterm-256color")}
	hp.up()
	t.Cleanup(func() { _, _ = hp.relay("down") })
	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	// The hub sees its disk full within a moment (it looks twice a
	// second); until then a new workspace may fail in other ways.
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		o, err := hp.relay("send", "--workspace", "probe", "--from", "probe", "nobody", "x")
		if err == nil || !strings.Contains(o, "the hub's message store is full") {
			return fmt.Errorf("the hub does not say it is full yet: %v: %s", err, o)
		}
		return nil
	})

	alice := ptytest.Start(t, ptytest.Options{Env: hp.env, Cols: 250, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Alice", "--"}, childArgv...)...)
	alice.WaitOutput(childMark, 30*time.Second)
	out := alice.Output()
	said := bytes.Index(out, []byte("Alice has not joined workspace default: the hub's message store is full"))
	if said < 0 || said > bytes.Index(out, []byte(childMark)) {
		t.Fatalf("the human was not told before the agent started that it has not joined:\n%s", out)
	}
	if !bytes.Contains(out, []byte("free disk space")) {
		t.Errorf("no fix named:\n%s", out)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	hp.waitAgents("Alice")
	testutil.WaitFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		o, err := hp.relay("send", "Alice", "room-again")
		if err != nil {
			return fmt.Errorf("relay send: %v: %s", err, o)
		}
		return nil
	})
	alice.WaitOutput("room-again", 30*time.Second)
}

// TestUpDetachRefusedAddress: relay up --detach on an address the system
// refuses (another program listens there) exits 1 at once and says why and
// how to fix it, instead of pointing at the hub's log.
func TestUpDetachRefusedAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(relayBin, "up", "--detach", "--dashboard", "off", "--listen", l.Addr().String())
	cmd.Env = append(baseEnv(t), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"))
	start := time.Now()
	out, err := runWithin(t, cmd, 30*time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, out)
	}
	for _, w := range []string{"the hub did not start", l.Addr().String(), "address already in use", "--listen"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the message does not say %q:\n%s", w, out)
		}
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("refused after %v; want at once", d.Round(time.Second))
	}
}
