package ptytest_test

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

func TestTmuxScreenRendersCursorAddressing(t *testing.T) {
	ptytest.NeedTmux(t)
	tests := []struct {
		name string
		raw  string
		want []string // the first rows, trailing spaces trimmed
	}{
		{"cursor addressing", "@relay:Bob\x1b[12GPlease\x1b[19Grun", []string{"@relay:Bob Please run"}},
		{"bare LF keeps the column", "ab\ncd", []string{"ab", "  cd"}},
		{"terminal queries are not echoed", "\x1b[c\x1b[>q\x1b[6nready", []string{"ready"}},
		{"alternate screen", "main\x1b[?1049h\x1b[Halt", []string{"alt"}},
		{"cut inside an escape sequence", "done\x1b]0;unfinished title", []string{"done"}},
		{"wide characters", "❯ héllo 日本", []string{"❯ héllo 日本"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			screen := ptytest.TmuxScreen(t, []byte(tt.raw), 40, 5)
			rows := strings.Split(screen, "\n")
			for i, w := range tt.want {
				if got := strings.TrimRight(rows[i], " "); got != w {
					t.Errorf("row %d = %q, want %q; screen:\n%s", i, got, w, screen)
				}
			}
		})
	}
}

func TestReplayAnswersQueries(t *testing.T) {
	ptytest.NeedTmux(t)
	r, err := ptytest.NewReplay([]byte("0123456789abc\x1b[2;4H"), 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	joined, err := r.Tmux("capture-pane", "-pJ")
	if err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(joined, "\n", 2)[0]; first != "0123456789abc" {
		t.Errorf("joined first line = %q, want the wrapped line whole", first)
	}
	cursor, err := r.Tmux("display-message", "-p", "#{cursor_x},#{cursor_y}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(cursor); got != "3,1" {
		t.Errorf("cursor = %s, want 3,1", got)
	}
}

func TestRenderFramesShowsEachCut(t *testing.T) {
	ptytest.NeedTmux(t)
	raw := []byte("one\r\ntwo\r\n")
	frames, err := ptytest.RenderFrames(raw, 20, 3, []int{5, len(raw)})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || strings.Contains(frames[0], "two") || !strings.Contains(frames[1], "two") {
		t.Errorf("frames = %q, want the first without \"two\" and the second with it", frames)
	}
}

func TestTermTypesAndReads(t *testing.T) {
	ptytest.NeedTmux(t)
	// cat echoes what it reads, so the typed bytes come back as output.
	term := ptytest.Start(t, ptytest.Options{Cols: 40, Rows: 10}, "sh", "-c", "stty -echo; echo started; exec cat")
	term.WaitOutput("started", 5*time.Second)
	term.Type("typed")
	term.Paste("pasted")
	term.Enter()
	if err := term.WaitFor(5*time.Second, func(raw []byte) bool { return bytes.Contains(raw, []byte("\x1b[200~pasted\x1b[201~")) }); err != nil {
		t.Fatalf("the paste did not come back: %v (raw %q)", err, term.Raw())
	}
	if _, err := term.WaitScreen(5*time.Second, func(s string) bool { return strings.Contains(s, "typed") }); err != nil {
		t.Fatal(err)
	}
	if err := term.Resize(50, 12); err != nil {
		t.Fatal(err)
	}
	if c, r := term.Size(); c != 50 || r != 12 {
		t.Errorf("size = %dx%d", c, r)
	}
	term.Close()
	if !term.Exited() {
		t.Error("Close returned before the program was reaped")
	}
	term.Close() // twice is fine
}

// TestTermExit: the exit code (128+n for signal n) and all of the
// program's last output are there once it has exited, and the terminal's
// mode can still be read.
func TestTermExit(t *testing.T) {
	tests := []struct {
		name   string
		script string
		poke   func(*ptytest.Term)
		want   int
	}{
		{"exit code", "echo READY; read x; exit 3", func(tm *ptytest.Term) { tm.Type("\r") }, 3},
		{"signal", "echo READY; sleep 100", func(tm *ptytest.Term) { tm.Signal(syscall.SIGTERM) }, 128 + int(syscall.SIGTERM)},
		{"last output", "echo READY; read x; head -c 100000 /dev/zero | tr '\\0' x; echo; echo LAST", func(tm *ptytest.Term) { tm.Type("\r") }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := ptytest.Start(t, ptytest.Options{}, "sh", "-c", tt.script)
			tm.WaitOutput("READY", 5*time.Second)
			tt.poke(tm)
			if got := tm.Wait(10 * time.Second); got != tt.want {
				t.Errorf("exit code %d, want %d", got, tt.want)
			}
			if tt.name == "last output" && !bytes.HasSuffix(bytes.TrimSpace(tm.Output()), []byte("LAST")) {
				t.Errorf("output after exit ends %q, want LAST", tm.Output()[max(0, tm.OutputLen()-40):])
			}
			if err := tm.WaitFor(time.Second, func(raw []byte) bool { return false }); err == nil || !strings.Contains(err.Error(), "exited") {
				t.Errorf("WaitFor after exit = %v, want an error saying the program exited", err)
			}
			if got, want := tm.Mode(), tm.InitialMode(); got != want {
				t.Errorf("mode after exit %v, want %v", got, want)
			}
		})
	}
}

// TestTermMode: a program that sets the terminal raw is seen raw.
func TestTermMode(t *testing.T) {
	tm := ptytest.Start(t, ptytest.Options{}, "sh", "-c", "stty raw -echo; echo READY; exec cat")
	if tm.InitialMode().Raw() {
		t.Fatal("a new terminal is raw")
	}
	tm.WaitOutput("READY", 5*time.Second)
	if !tm.Mode().Raw() {
		t.Errorf("mode %v after stty raw, want raw", tm.Mode())
	}
}

// TestNewAnswersQueries: New serves programs outside tests, and with
// AnswerQueries the terminal answers a cursor-position query.
func TestNewAnswersQueries(t *testing.T) {
	if _, err := ptytest.New(ptytest.Options{}); err == nil {
		t.Error("New with no argv succeeded")
	}
	tm, err := ptytest.New(ptytest.Options{AnswerQueries: true},
		"sh", "-c", `stty raw -echo; printf '\033[6n'; x=$(head -c 6); printf 'got:%s\n' "$x" | od -c`)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	select {
	case <-tm.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("program did not end; output %q", tm.Output())
	}
	if want := `g   o   t   : 033   [   1   ;   1   R`; !strings.Contains(string(tm.Output()), want) {
		t.Errorf("output %q, want the answer %q", tm.Output(), want)
	}
}
