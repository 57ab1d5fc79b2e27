package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func wrap(t *testing.T, opts ptytest.Options, argv ...string) *ptytest.Term {
	t.Helper()
	if opts.Env == nil {
		opts.Env = env(t)
	}
	return ptytest.Start(t, opts, append([]string{relayBin, "wrap", "--"}, argv...)...)
}

func TestWrapExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want int
	}{
		{"success", []string{"true"}, 0},
		{"failure", []string{"sh", "-c", "exit 7"}, 7},
		{"killed", []string{"sh", "-c", "kill -KILL $$"}, 137},
		{"segfault", []string{"sh", "-c", "kill -SEGV $$"}, 139},
		{"not found", []string{"/nonexistent/agent"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm := wrap(t, ptytest.Options{}, tc.argv...)
			if got := tm.Wait(10 * time.Second); got != tc.want {
				t.Errorf("exit code %d, want %d; output %q", got, tc.want, tm.Output())
			}
		})
	}
}

func TestWrapUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"wrap"}, "missing COMMAND"},
		{[]string{"wrap", "--bogus", "x"}, "flag provided but not defined"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"wrap", "--name", "a b", "true"}, `--name: bad name: agent name "a b"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(relayBin, tc.args...)
			cmd.Env = env(t)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Fatalf("want exit 2, got %v", err)
			}
			if !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "Usage") && !strings.Contains(stderr.String(), "usage") {
				t.Errorf("stderr %q lacks %q and the usage", stderr.String(), tc.want)
			}
		})
	}
}

func TestWrapVersion(t *testing.T) {
	out, err := exec.Command(relayBin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "relay ") {
		t.Fatalf("relay version: %q, %v", out, err)
	}
}

// TestWrapChildEnv: the child learns its name, session and state folder.
func TestWrapChildEnv(t *testing.T) {
	e := env(t)
	tm := ptytest.Start(t, ptytest.Options{Env: e}, relayBin, "wrap", "--name", "Alice", "--", "sh", "-c", `echo "name=$RELAY_NAME sid=${#RELAY_SESSION_ID}"`)
	tm.Wait(10 * time.Second)
	if out := string(tm.Output()); !strings.Contains(out, "name=Alice sid=16") {
		t.Errorf("child saw %q", out)
	}
}

// TestWrapResize: the child starts at the human's size and follows changes.
func TestWrapResize(t *testing.T) {
	tm := wrap(t, ptytest.Options{Cols: 100, Rows: 30}, "sh", "-c", `stty size; while read x; do stty size; done`)
	tm.WaitOutput("30 100", 10*time.Second)
	tm.Resize(132, 50)
	testutil.Eventually(t, func() error {
		tm.Type("\r")
		time.Sleep(50 * time.Millisecond)
		if !bytes.Contains(tm.Output(), []byte("50 132")) {
			return fmt.Errorf("child has not seen 50 132: %q", tm.Output())
		}
		return nil
	})
	tm.Type("\x04")
	if code := tm.Wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestWrapOutputExact: a 10 MB line without a newline, with invalid UTF-8
// and every byte value but newline, reaches the human byte for byte, and the
// wrapper exits as soon as the child has and the last byte is out.
func TestWrapOutputExact(t *testing.T) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	data := make([]byte, size)
	rand.Read(data)
	for i, b := range data {
		if b == '\n' || b == '\r' {
			data[i] = 0xff // invalid UTF-8 on its own
		}
	}
	file := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := wrap(t, ptytest.Options{}, "cat", file)
	if code := tm.Wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.Eventually(t, func() error {
		if n := tm.OutputLen(); n < size {
			return fmt.Errorf("%d of %d bytes arrived", n, size)
		}
		return nil
	})
	if out := tm.Output(); !bytes.Equal(out, data) {
		i := 0
		for i < len(out) && i < len(data) && out[i] == data[i] {
			i++
		}
		t.Fatalf("output differs from input at byte %d (got %d bytes, want %d)", i, len(out), len(data))
	}
}

// TestWrapInputExact: every byte the human types reaches the child as it is.
func TestWrapInputExact(t *testing.T) {
	data := make([]byte, 64<<10)
	rand.Read(data)
	file := filepath.Join(t.TempDir(), "got")
	tm := wrap(t, ptytest.Options{}, "sh", "-c", fmt.Sprintf(`stty raw -echo; echo READY; head -c %d > %s; stty sane`, len(data), file))
	tm.WaitOutput("READY", 10*time.Second)
	for p := data; len(p) > 0; {
		n := min(len(p), 1000)
		if _, err := tm.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if code := tm.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("child read %d bytes that differ from the %d typed", len(got), len(data))
	}
}

// TestWrapPipedStdin: with stdin a pipe, there is no raw mode, and the end
// of input reaches the child, so `printf 'hi\n' | relay wrap -- cat` ends.
func TestWrapPipedStdin(t *testing.T) {
	for _, in := range []string{"hi\n", "no newline", ""} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			cmd := exec.Command(relayBin, "wrap", "--", "cat")
			cmd.Env = env(t)
			cmd.Stdin = strings.NewReader(in)
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("relay wrap -- cat did not end after its stdin did")
			}
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if want := strings.TrimSuffix(in, "\n"); !strings.Contains(string(out), want) {
				t.Errorf("output %q lacks %q", out, want)
			}
		})
	}
}

// TestWrapAnswersQueries: with no human terminal, the wrapper answers the
// cursor position and device attribute queries TUIs send at start.
func TestWrapAnswersQueries(t *testing.T) {
	script := `stty raw -echo; printf '\033[6n\033[c'; ans=$(dd bs=1 count=2 2>/dev/null; IFS= read -r -d R x; printf '%s' "$x"); stty sane; echo; echo "got:$ans" | od -c | head -3`
	cmd := exec.Command(relayBin, "wrap", "--", "bash", "-c", script)
	cmd.Env = env(t)
	r, w, _ := os.Pipe() // stdin that never ends and never answers
	defer w.Close()
	cmd.Stdin = r
	out, err := runWithin(t, cmd, 10*time.Second)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "[   1   ;   1") {
		t.Errorf("no cursor position answer in %q", out)
	}
}

func runWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return buf.Bytes(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v still running after %v: %q", cmd.Args, d, buf.Bytes())
		return nil, nil
	}
}

// TestWrapRestoresTerminal: on every way out, the human's terminal is left
// in the mode it had before relay started.
func TestWrapRestoresTerminal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		env     []string
		poke    func(tm *ptytest.Term)
		panicky bool
	}{
		{name: "normal exit", argv: []string{"sh", "-c", "echo READY; read x"}, poke: func(tm *ptytest.Term) { tm.Type("\r") }},
		{name: "child crash", argv: []string{"sh", "-c", "echo READY; read x; kill -SEGV $$"}, poke: func(tm *ptytest.Term) { tm.Type("\r") }},
		{name: "SIGTERM", argv: []string{"sh", "-c", "echo READY; sleep 100"}, poke: func(tm *ptytest.Term) { tm.Signal(syscall.SIGTERM) }},
		{name: "SIGHUP", argv: []string{"sh", "-c", "echo READY; sleep 100"}, poke: func(tm *ptytest.Term) { tm.Signal(syscall.SIGHUP) }},
		{name: "SIGTERM ignored", argv: []string{"sh", "-c", "trap '' TERM; echo READY; sleep 100"}, env: []string{}, poke: func(tm *ptytest.Term) { tm.Signal(syscall.SIGTERM) }},
		// A bug: a goroutine of the session panics (a test program that
		// wraps like relay does, since relay carries no test hook).
		{name: "panic", argv: []string{"sh", "-c", "echo READY; sleep 100"}, panicky: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tm *ptytest.Term
			if tc.panicky {
				tm = ptytest.Start(t, ptytest.Options{Env: env(t, tc.env...)}, append([]string{panickyBin(t)}, tc.argv...)...)
			} else {
				tm = wrap(t, ptytest.Options{Env: env(t, tc.env...)}, tc.argv...)
			}
			if tc.poke != nil {
				tm.WaitOutput("READY", 10*time.Second)
				testutil.Eventually(t, func() error {
					if !tm.Mode().Raw() {
						return fmt.Errorf("terminal not raw while relay runs: %v", tm.Mode())
					}
					return nil
				})
				tc.poke(tm)
			}
			tm.Wait(20 * time.Second)
			if got, want := tm.Mode(), tm.InitialMode(); got != want {
				t.Errorf("terminal mode after %s:\n got %v\nwant %v", tc.name, got, want)
			}
		})
	}
}

// TestWrapFullScreen: a full-screen program (less) runs through the wrapper:
// it draws on the alternate screen, takes keys, and leaves cleanly.
func TestWrapFullScreen(t *testing.T) {
	if _, err := exec.LookPath("less"); err != nil {
		t.Skip("less not installed (.ci/run installs it)")
	}
	file := filepath.Join(t.TempDir(), "text")
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "line %03d of the file\n", i)
	}
	os.WriteFile(file, []byte(b.String()), 0o600)
	tm := wrap(t, ptytest.Options{Cols: 60, Rows: 20}, "less", file)
	tm.WaitOutput("line 019 of the file", 10*time.Second)
	tm.Type(" ") // next page
	tm.WaitOutput("line 038 of the file", 10*time.Second)
	tm.Type("q")
	if code := tm.Wait(10 * time.Second); code != 0 {
		t.Fatalf("less exited %d", code)
	}
	screen := ptytest.Screen(t, tm.Output(), 60, 20)
	if strings.Contains(screen, "line 038") {
		t.Errorf("less's alternate screen still shows after exit:\n%s", screen)
	}
	if got, want := tm.Mode(), tm.InitialMode(); got != want {
		t.Errorf("terminal mode after less:\n got %v\nwant %v", got, want)
	}
}

// TestWrapJobControl: Ctrl-Z suspends the wrapped job to the human's shell,
// which gets its terminal back; fg resumes it in raw mode with its size.
func TestWrapJobControl(t *testing.T) {
	tm := ptytest.Start(t, ptytest.Options{Env: env(t, "PS1=$ ")}, "bash", "--norc", "--noprofile", "-i")
	tm.Type(relayBin + " wrap -- sh -c 'while read x; do echo \"got:$x\"; stty size; done'\r")
	tm.Type("one\r")
	tm.WaitOutput("got:one", 10*time.Second)
	tm.Type("\x1a") // Ctrl-Z
	tm.WaitOutput("Stopped", 10*time.Second)
	tm.Resize(90, 33) // while stopped
	tm.Type("fg\r")
	tm.Type("two\r")
	tm.WaitOutput("got:two", 10*time.Second)
	tm.WaitOutput("33 90", 10*time.Second)
	tm.Type("\x04") // ends the wrapped loop; bash prompts again
	testutil.Eventually(t, func() error {
		if !bytes.HasSuffix(tm.Output(), []byte("$ ")) {
			return fmt.Errorf("no prompt after the job ended: %q", tm.Output())
		}
		return nil
	})
	tm.Type("exit\r")
	if code := tm.Wait(10 * time.Second); code != 0 {
		t.Fatalf("bash exited %d: %q", code, tm.Output())
	}
}

// panickyBin builds testdata/panicky once per test binary.
func panickyBin(t *testing.T) string {
	t.Helper()
	panickyOnce.Do(func() {
		panickyPath = filepath.Join(filepath.Dir(relayBin), "panicky")
		out, err := exec.Command("go", "build", "-o", panickyPath, "./testdata/panicky").CombinedOutput()
		if err != nil {
			panickyErr = fmt.Errorf("build testdata/panicky: %v\n%s", err, out)
		}
	})
	if panickyErr != nil {
		t.Fatal(panickyErr)
	}
	return panickyPath
}

var (
	panickyOnce sync.Once
	panickyPath string
	panickyErr  error
)
