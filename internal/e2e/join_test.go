package e2e

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/ptytest"
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
