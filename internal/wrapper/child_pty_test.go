package wrapper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// run starts opts' command with a closed stdin and returns what it showed
// and its exit code.
func run(t *testing.T, opts Options) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	out := &testutil.Buffer{}
	opts.Stdin, opts.Stdout = r, out
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	code := s.Wait()
	return strings.ReplaceAll(out.String(), "\r\n", "\n"), code
}

// TestChildStartsAsExecStartsIt: the child runs as os/exec with
// creack/pty ran it: in a session of its own whose controlling terminal
// is the pty (its stdin, stdout and stderr), found in PATH, in Dir, with
// the environment as os/exec passes it, and its exit code comes back.
func TestChildStartsAsExecStartsIt(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("terminal, session, folder, exit code", func(t *testing.T) {
		// $$ is the shell's pid; ps is not everywhere, /proc/self/stat is
		// not on macOS: the session is the one tty's owner says, via -t.
		script := `test -t 0 && test -t 1 && test -t 2 && echo ttys; tty; pwd -P; ` +
			`exec 3</dev/tty && echo ctty; exit 7`
		out, code := run(t, Options{Command: []string{"sh", "-c", script}, Dir: dir})
		if code != 7 {
			t.Errorf("exit code %d, want 7; output:\n%s", code, out)
		}
		for _, want := range []string{"ttys\n", "/dev/", real + "\n", "ctty\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("the wrapper's environment, PWD its Dir", func(t *testing.T) {
		t.Setenv("RELAY_CHILD_TEST", "inherited")
		out, _ := run(t, Options{Command: []string{"sh", "-c", `echo "$RELAY_CHILD_TEST $PWD"`}, Dir: dir})
		if want := "inherited " + dir + "\n"; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})
	t.Run("a variable set twice: the last wins, once", func(t *testing.T) {
		env := []string{"PATH=" + os.Getenv("PATH"), "X=first", "Y=y", "X=last"}
		out, _ := run(t, Options{Command: []string{"env"}, Env: env})
		if n := strings.Count(out, "X="); n != 1 || !strings.Contains(out, "X=last\n") {
			t.Errorf("X %d times, want once as last:\n%s", n, out)
		}
	})
	t.Run("not in PATH", func(t *testing.T) {
		_, err := Start(Options{Command: []string{"relay-no-such-command-" + strconv.Itoa(os.Getpid())}})
		if err == nil || !strings.Contains(err.Error(), "executable file not found") {
			t.Errorf("err = %v, want not found", err)
		}
	})
}
