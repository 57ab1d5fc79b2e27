package ptytest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests' one terminal renderer is tmux: output is replayed into a
// private tmux server (its own socket in a temporary folder, so it never
// touches the user's tmux) and read back with capture-pane.

// replayDone is the window title the replay sets after the stream: once
// tmux shows it, tmux has parsed every byte before it.
const replayDone = "ptytest-replay-done"

// TmuxScreen replays raw into a fresh, private tmux server sized cols×rows
// and returns what `tmux capture-pane -p` shows once the replay is done: the
// reference picture of the screen. It skips the test when tmux is missing.
func TmuxScreen(t testing.TB, raw []byte, cols, rows int) string {
	t.Helper()
	NeedTmux(t)
	s, err := RenderScreen(raw, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Screen is TmuxScreen (the name the wrapper tests use).
func Screen(t testing.TB, out []byte, cols, rows int) string {
	t.Helper()
	return TmuxScreen(t, out, cols, rows)
}

// NeedTmux skips the test when tmux is not installed.
func NeedTmux(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("skipping: tmux is not installed")
	}
}

// RenderScreen is TmuxScreen for callers without a test.
func RenderScreen(raw []byte, cols, rows int) (string, error) {
	r, err := NewReplay(raw, cols, rows)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.Tmux("capture-pane", "-p")
}

// Replay is a private tmux server whose only pane, sized cols×rows, has
// drawn a recorded stream, for tests that ask tmux more than the screen
// (joined lines, the cursor). Close it when done.
type Replay struct{ srv *tmuxServer }

// NewReplay replays raw into a new private tmux server and returns once
// tmux has parsed all of it.
func NewReplay(raw []byte, cols, rows int) (*Replay, error) {
	srv, err := newTmuxServer()
	if err != nil {
		return nil, fmt.Errorf("tmux replay: %w", err)
	}
	in := filepath.Join(srv.dir, "in.raw")
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		srv.close()
		return nil, fmt.Errorf("tmux replay: %w", err)
	}
	// CAN ends an escape sequence the stream may have left open, so that
	// the title that follows is parsed as one.
	script := fmt.Sprintf(`cat %s; printf '\030\033]2;%s\007'`, shellQuote(in), replayDone)
	if err := srv.start(cols, rows, script); err != nil {
		srv.close()
		return nil, fmt.Errorf("tmux replay: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		title, err := srv.run("display-message", "-p", "#{pane_title}")
		if err != nil {
			srv.close()
			return nil, fmt.Errorf("tmux replay: %w", err)
		}
		if strings.TrimSpace(title) == replayDone {
			return &Replay{srv: srv}, nil
		}
		if time.Now().After(deadline) {
			srv.close()
			return nil, fmt.Errorf("tmux replay: %d bytes not parsed after 30s (title %q)", len(raw), title)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Tmux runs a tmux command (such as capture-pane -pJ, or display-message
// -p '#{cursor_x}') against the replay's server and returns its output.
func (r *Replay) Tmux(args ...string) (string, error) {
	out, err := r.srv.run(args...)
	if err != nil {
		return "", fmt.Errorf("tmux replay: %w", err)
	}
	return out, nil
}

// Close stops the server and removes its folder.
func (r *Replay) Close() { r.srv.close() }

// RenderFrames replays raw into one private tmux server sized cols×rows,
// cut at the given byte offsets (ascending), and returns the screen after
// each cut: what a person would have seen at those moments. The last frame
// is the screen after all of raw when the last cut is len(raw). A cut may
// fall inside an escape sequence, so no marker can follow it: each frame
// is taken once two captures in a row agree.
func RenderFrames(raw []byte, cols, rows int, cuts []int) ([]string, error) {
	srv, err := newTmuxServer()
	if err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	defer srv.close()
	fifo := filepath.Join(srv.dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	if err := srv.start(cols, rows, "cat "+shellQuote(fifo)); err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	defer w.Close()
	var frames []string
	prevCut := 0
	var prev string
	for _, cut := range cuts {
		if cut < prevCut || cut > len(raw) {
			return nil, fmt.Errorf("tmux frames: cut %d out of order or past the end (%d bytes)", cut, len(raw))
		}
		if _, err := w.Write(raw[prevCut:cut]); err != nil {
			return nil, fmt.Errorf("tmux frames: %w", err)
		}
		wrote := cut > prevCut
		prevCut = cut
		// Capture until two captures in a row agree (and differ from the
		// previous frame when bytes were written, within a short wait).
		var last string
		for i := 0; ; i++ {
			time.Sleep(20 * time.Millisecond)
			out, err := srv.run("capture-pane", "-p")
			if err != nil {
				return nil, fmt.Errorf("tmux frames: %w", err)
			}
			settled := i > 0 && out == last
			last = out
			if settled && (!wrote || out != prev || i > 10) || i > 100 {
				break
			}
		}
		prev = last
		frames = append(frames, last)
	}
	return frames, nil
}

// tmuxServer is a private tmux server: its socket and configuration live
// in a temporary folder.
type tmuxServer struct {
	dir, sock, conf string
	started         bool
}

func newTmuxServer() (*tmuxServer, error) {
	dir, err := os.MkdirTemp("", "ptytest-tmux-")
	if err != nil {
		return nil, err
	}
	s := &tmuxServer{dir: dir, sock: filepath.Join(dir, "sock"), conf: filepath.Join(dir, "tmux.conf")}
	if err := os.WriteFile(s.conf, []byte("set -g status off\nset -g history-limit 0\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// start opens the server's one session, sized cols×rows, running script.
// The pane's terminal must neither echo tmux's answers to the stream's
// queries (they would be drawn on the screen) nor turn a bare LF into CR
// LF: the recorded bytes already went through the program's own terminal
// settings once. The pane stays open after the script.
func (s *tmuxServer) start(cols, rows int, script string) error {
	script = "stty raw -echo; " + script + "; exec sleep 600"
	if _, err := s.run("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), script); err != nil {
		return err
	}
	s.started = true
	return nil
}

// run runs one tmux command against the server.
func (s *tmuxServer) run(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", s.sock, "-f", s.conf}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=", "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %v: %w: %s", args, err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// close kills the server and removes its folder.
func (s *tmuxServer) close() {
	if s.started {
		_, _ = s.run("kill-server")
	}
	os.RemoveAll(s.dir)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
