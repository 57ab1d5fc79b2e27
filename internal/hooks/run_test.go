package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hooks"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestRunResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		shell string
		want  hooks.Outcome
	}{
		{"plain text is injected", `echo "Deployed to staging"`, hooks.Outcome{Inject: "Deployed to staging"}},
		{"no output", `true`, hooks.Outcome{}},
		{"json inject and stop", `echo '{"inject": "done", "stop": true}'`, hooks.Outcome{Inject: "done", Stop: true}},
		{"json block", `echo '{"block": true, "reason": "frozen"}'`, hooks.Outcome{Block: true, Reason: "frozen"}},
		{"claude code decision", `echo '{"decision": "block", "reason": "not now"}'`, hooks.Outcome{Block: true, Reason: "not now"}},
		{"claude code context", `echo '{"hookSpecificOutput": {"additionalContext": "ctx"}}'`, hooks.Outcome{Inject: "ctx"}},
		{"claude code continue false", `echo '{"continue": false, "stopReason": "enough"}'`, hooks.Outcome{Stop: true, Reason: "enough"}},
		{"hold", `echo '{"hold": true}'`, hooks.Outcome{Hold: true}},
		{"neutralize", `echo '{"inject": "@relay:Bob said x", "neutralize": true}'`, hooks.Outcome{Inject: "@relay:Bob said x", Neutralize: true}},
		{"json without known fields is text", `echo '{"status": "ok"}'`, hooks.Outcome{Inject: `{"status": "ok"}`}},
		{"broken json is text", `echo '{"inject": '`, hooks.Outcome{Inject: `{"inject": `}},
		{"exit 2 refuses with stderr", `echo "deploys are frozen until 17:00" >&2; exit 2`,
			hooks.Outcome{Block: true, Reason: "deploys are frozen until 17:00", Stderr: "deploys are frozen until 17:00\n"}},
		{"exit 2 without a reason", `exit 2`, hooks.Outcome{Block: true, Reason: "refused (exit status 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := hooks.Run(context.Background(), hooks.Command{Shell: tt.shell}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRunRewrite(t *testing.T) {
	t.Parallel()
	got, err := hooks.Run(context.Background(), hooks.Command{Shell: `echo '{"message": "new text"}'`}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message == nil || *got.Message != "new text" {
		t.Fatalf("Message = %v, want new text", got.Message)
	}
}

func TestRunFailureIsAnError(t *testing.T) {
	t.Parallel()
	_, err := hooks.Run(context.Background(), hooks.Command{Shell: `echo one >&2; echo two >&2; exit 3`}, nil, nil)
	var ee *hooks.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("err = %v, want *ExitError with code 3", err)
	}
	if want := "exit status 3: one / two"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestRunMissingProgram(t *testing.T) {
	t.Parallel()
	_, err := hooks.Run(context.Background(), hooks.Command{Argv: []string{"./no-such-handler"}, Dir: t.TempDir()}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no-such-handler") {
		t.Fatalf("err = %v, want one naming the program", err)
	}
}

// TestRunStdinAndEnv checks that the input arrives as JSON on stdin and the
// vars in the environment, on top of the base environment.
func TestRunStdinAndEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := hooks.Command{
		Argv: []string{"sh", "-c", `cat > stdin.json; printf '%s|%s|%s' "$BASE" "$RELAY_X" "$RELAY_Y" > env.txt`},
		Dir:  dir,
		Env:  []string{"PATH=" + os.Getenv("PATH"), "BASE=kept", "RELAY_X=old"},
	}
	_, err := hooks.Run(context.Background(), cmd, map[string]any{"a": 1, "b": "two"}, map[string]string{"RELAY_X": "new", "RELAY_Y": "y y"})
	if err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "stdin.json"), `{"a":1,"b":"two"}`)
	assertFile(t, filepath.Join(dir, "env.txt"), "kept|new|y y")
}

// TestRunTimeoutKillsGroup: a handler that starts a background child and
// ignores SIGTERM is killed with its child when its time is up.
func TestRunTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := `trap '' TERM; sleep 1000 & echo $! > child.pid; wait`
	_, err := hooks.Run(context.Background(), hooks.Command{Shell: script, Dir: dir, Timeout: time.Second}, nil, nil)
	if !errors.Is(err, hooks.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if want := "timed out after 1s"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "child.pid")))
}

// TestRunLeavesNothingBehind: what a handler started in the background is
// killed when the handler exits, and does not delay the result.
func TestRunLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := hooks.Run(context.Background(), hooks.Command{Shell: `sleep 1000 & echo $! > child.pid; echo started`, Dir: dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Inject != "started" {
		t.Errorf("Inject = %q", out.Inject)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "child.pid")))
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := hooks.Run(ctx, hooks.Command{Shell: `echo $$ > pid; exec sleep 1000`, Dir: dir}, nil, nil)
		done <- err
	}()
	testutil.Eventually(t, func() error {
		_, err := os.Stat(filepath.Join(dir, "pid"))
		return err
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertGone(t, readPID(t, filepath.Join(dir, "pid")))
}

func TestRunCapsOutput(t *testing.T) {
	t.Parallel()
	out, err := hooks.Run(context.Background(), hooks.Command{Shell: `head -c 5000000 /dev/zero | tr '\0' x; head -c 5000000 /dev/zero >&2`}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated {
		t.Error("Truncated = false")
	}
	if !strings.HasSuffix(out.Inject, "[relay: output truncated at 64 KiB]") {
		t.Errorf("Inject does not say it was truncated: ...%q", out.Inject[max(0, len(out.Inject)-60):])
	}
	if len(out.Inject) > hooks.MaxOutput+100 || len(out.Stderr) > hooks.MaxOutput {
		t.Errorf("kept %d bytes of stdout and %d of stderr, cap is %d", len(out.Inject), len(out.Stderr), hooks.MaxOutput)
	}
}

func TestRunHandlerIgnoringStdin(t *testing.T) {
	t.Parallel()
	// A big input that is never read must not hang the run.
	big := strings.Repeat("x", 1<<20)
	out, err := hooks.Run(context.Background(), hooks.Command{Shell: `echo ok`}, map[string]string{"body": big}, nil)
	if err != nil || out.Inject != "ok" {
		t.Fatalf("out = %+v, err = %v", out, err)
	}
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s = %q, want %q", filepath.Base(path), b, want)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// assertGone waits until pid no longer exists (or is a zombie waiting for
// init to reap it).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	testutil.Eventually(t, func() error {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			return nil
		}
		return fmt.Errorf("process %d is still running", pid)
	})
}
