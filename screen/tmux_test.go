package screen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/testutil"
)

// tmuxDone is the title the replay sets after the stream, so that the
// capture waits until tmux has parsed every byte before it.
const tmuxDone = "relay-screen-replay-done"

// referenceTmux is the tmux version the golden files were made with; the
// live comparisons run only against it, since tmux's quirks change between
// versions.
const referenceTmux = "tmux 3.3a"

// requireReferenceTmux skips the test unless the reference tmux is
// installed.
func requireReferenceTmux(t *testing.T) {
	t.Helper()
	out, err := exec.Command("tmux", "-V").Output()
	if err != nil {
		t.Skip("tmux not installed")
	}
	if v := strings.TrimSpace(string(out)); v != referenceTmux {
		t.Skipf("%s installed; the live comparison needs %s", v, referenceTmux)
	}
}

// tmuxCapture replays data in a detached tmux of cols x rows (status line
// off, the pty in raw mode so that tmux sees the bytes unchanged) and
// returns `capture-pane -p` of the result. It skips the test without tmux.
func tmuxCapture(t testing.TB, cols, rows int, data []byte) string {
	t.Helper()
	return tmuxCaptures(t, cols, rows, data, "-p")[0]
}

// tmuxCaptures is tmuxCapture with one capture-pane per flag set (such as
// -p and -pJ) of the same replay; "cursor" gives tmux's cursor as "x,y".
func tmuxCaptures(t testing.TB, cols, rows int, data []byte, flags ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "stream")
	conf := filepath.Join(dir, "tmux.conf")
	sock := filepath.Join(dir, "sock")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("set -g status off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmux := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "TMUX=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	script := fmt.Sprintf("stty raw -echo; cat %s; printf '\\033]2;%s\\007'; exec sleep 600", file, tmuxDone)
	if _, err := tmux("new-session", "-d", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), script); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	testutil.Eventually(t, func() error {
		title, err := tmux("display-message", "-p", "#{pane_title}")
		if err != nil {
			return err
		}
		if strings.TrimSpace(title) != tmuxDone {
			return testutil.Errorf("tmux has not replayed the stream yet (title %q)", title)
		}
		return nil
	})
	size, err := tmux("display-message", "-p", "#{pane_width}x#{pane_height}")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%dx%d", cols, rows); strings.TrimSpace(size) != want {
		t.Fatalf("tmux pane is %s, want %s", strings.TrimSpace(size), want)
	}
	var outs []string
	for _, f := range flags {
		if f == "cursor" {
			out, err := tmux("display-message", "-p", "#{cursor_x},#{cursor_y}")
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, strings.TrimSpace(out))
			continue
		}
		out, err := tmux("capture-pane", f)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	return outs
}
