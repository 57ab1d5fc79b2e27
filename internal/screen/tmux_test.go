package screen

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

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
// The replay is ptytest's, the tests' one tmux renderer.
func tmuxCaptures(t testing.TB, cols, rows int, data []byte, flags ...string) []string {
	t.Helper()
	ptytest.NeedTmux(t)
	r, err := ptytest.NewReplay(data, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	size, err := r.Tmux("display-message", "-p", "#{pane_width}x#{pane_height}")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%dx%d", cols, rows); strings.TrimSpace(size) != want {
		t.Fatalf("tmux pane is %s, want %s", strings.TrimSpace(size), want)
	}
	var outs []string
	for _, f := range flags {
		args := []string{"capture-pane", f}
		if f == "cursor" {
			args = []string{"display-message", "-p", "#{cursor_x},#{cursor_y}"}
		}
		out, err := r.Tmux(args...)
		if err != nil {
			t.Fatal(err)
		}
		if f == "cursor" {
			out = strings.TrimSpace(out)
		}
		outs = append(outs, out)
	}
	return outs
}
