package agenttest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TmuxScreen replays raw into a fresh, private tmux server sized cols×rows
// and returns what `tmux capture-pane -p` shows once the replay is done: the
// reference picture of the screen. It skips the test when tmux is missing.
func TmuxScreen(t testing.TB, raw []byte, cols, rows int) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("skipping: tmux is not installed")
	}
	s, err := RenderScreen(raw, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// RenderScreen is TmuxScreen for callers without a test: it runs its own
// tmux server on a socket in a temporary folder, so it never touches the
// user's tmux, and removes everything afterwards.
func RenderScreen(raw []byte, cols, rows int) (string, error) {
	dir, err := os.MkdirTemp("", "agenttest-tmux-")
	if err != nil {
		return "", fmt.Errorf("tmux screen: %w", err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in.raw")
	mark := filepath.Join(dir, "done")
	conf := filepath.Join(dir, "tmux.conf")
	sock := filepath.Join(dir, "sock")
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		return "", fmt.Errorf("tmux screen: %w", err)
	}
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g history-limit 0\n"), 0o600); err != nil {
		return "", fmt.Errorf("tmux screen: %w", err)
	}
	tmux := func(args ...string) ([]byte, error) {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("tmux %v: %w: %s", args, err, bytes.TrimSpace(out))
		}
		return out, nil
	}
	// The pane's terminal must neither echo tmux's answers to the
	// recording's queries (they would be drawn on the screen) nor turn a
	// bare LF into CR LF: the recorded bytes already went through the
	// child's own terminal settings once.
	script := fmt.Sprintf("stty raw -echo; cat %s; touch %s; exec sleep 600", shellQuote(in), shellQuote(mark))
	if _, err := tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), script); err != nil {
		return "", fmt.Errorf("tmux screen: %w", err)
	}
	defer func() { _, _ = tmux("kill-server") }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("tmux screen: replay of %d bytes not done after 30s", len(raw))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// tmux reads the pane's output asynchronously: capture until two
	// captures in a row agree.
	var prev []byte
	for i := 0; ; i++ {
		out, err := tmux("capture-pane", "-p")
		if err != nil {
			return "", fmt.Errorf("tmux screen: %w", err)
		}
		if prev != nil && bytes.Equal(out, prev) {
			return string(out), nil
		}
		if i > 100 {
			return "", fmt.Errorf("tmux screen: capture never settled")
		}
		prev = out
		time.Sleep(30 * time.Millisecond)
	}
}

func shellQuote(s string) string {
	return "'" + string(bytes.ReplaceAll([]byte(s), []byte("'"), []byte(`'\''`))) + "'"
}

// RenderFrames replays raw into one private tmux server sized cols×rows,
// cut at the given byte offsets (ascending), and returns the screen after
// each cut: what a person would have seen at those moments. The last frame
// is the screen after all of raw when the last cut is len(raw).
func RenderFrames(raw []byte, cols, rows int, cuts []int) ([]string, error) {
	dir, err := os.MkdirTemp("", "agenttest-tmux-")
	if err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	defer os.RemoveAll(dir)
	fifo := filepath.Join(dir, "in.fifo")
	conf := filepath.Join(dir, "tmux.conf")
	sock := filepath.Join(dir, "sock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g history-limit 0\n"), 0o600); err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	tmux := func(args ...string) ([]byte, error) {
		cmd := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("tmux %v: %w: %s", args, err, bytes.TrimSpace(out))
		}
		return out, nil
	}
	script := fmt.Sprintf("stty raw -echo; cat %s; exec sleep 600", shellQuote(fifo))
	if _, err := tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), script); err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	defer func() { _, _ = tmux("kill-server") }()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("tmux frames: %w", err)
	}
	defer w.Close()
	var frames []string
	prevCut := 0
	var prev []byte
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
		var last []byte
		for i := 0; ; i++ {
			time.Sleep(20 * time.Millisecond)
			out, err := tmux("capture-pane", "-p")
			if err != nil {
				return nil, fmt.Errorf("tmux frames: %w", err)
			}
			settled := last != nil && bytes.Equal(out, last)
			if settled && (!wrote || !bytes.Equal(out, prev) || i > 10) || i > 100 {
				last = out
				break
			}
			last = out
		}
		prev = last
		frames = append(frames, string(last))
	}
	return frames, nil
}
