package procfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestOpenFiles: a grandchild's open file is found from the top process;
// files of unrelated processes are not.
func TestOpenFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	dir := t.TempDir()
	held := filepath.Join(dir, "held.txt")
	// sh → sh → sleep, the inner shell holding held open on fd 7.
	cmd := exec.Command("sh", "-c", `sh -c 'exec 7>>"$1"; sleep 30' _ "$1"`, "_", held)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testutil.Eventually(t, func() error {
		files, err := OpenFiles(cmd.Process.Pid)
		if err != nil {
			return err
		}
		if !slices.Contains(files, held) {
			return errors.New("held.txt not among the open files yet")
		}
		return nil
	})
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	files, err := OpenFiles(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(files, held) {
		t.Errorf("an unrelated process's open files hold %s: %q", held, files)
	}
}

func TestOpenFilesNoProc(t *testing.T) {
	_, err := openFiles(t.TempDir(), 1)
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("openFiles without /proc: %v, want ErrUnsupported wrapping errors.ErrUnsupported", err)
	}
}

func TestParentCommWithParens(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "42", "stat"), []byte("42 (a) b (c)) S 7 42 42 0 -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pp, ok := parent(proc, 42); !ok || pp != 7 {
		t.Errorf("parent = %d, %v; want 7, true", pp, ok)
	}
}

// TestComm: the program's name of this test's own process.
func TestComm(t *testing.T) {
	name, err := Comm(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Base(os.Args[0]); !strings.HasPrefix(want, name) || name == "" {
		t.Errorf("Comm = %q, want the start of %q", name, want)
	}
	if _, err := Comm(-1); err == nil {
		t.Error("Comm(-1): no error")
	}
}

// TestRunning: a busy loop is running, a sleep is not, and neither is a
// process that ended.
func TestRunning(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	busy := start("sh", "-c", "while :; do :; done")
	idle := start("sleep", "30")
	for _, tc := range []struct {
		name string
		pids []int
		want bool
	}{
		{"busy loop", []int{busy.Process.Pid}, true},
		{"sleep", []int{idle.Process.Pid}, false},
		{"both", []int{idle.Process.Pid, busy.Process.Pid}, true},
		{"none", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A process just started may still be running (the sleep)
			// or be between two slices (the loop): wait for the answer.
			testutil.Eventually(t, func() error {
				got, err := Running(tc.pids)
				if err != nil {
					return err
				}
				if got != tc.want {
					return errors.New("not yet")
				}
				return nil
			})
		})
	}
	t.Run("ended", func(t *testing.T) {
		done := exec.Command("true")
		if err := done.Run(); err != nil {
			t.Fatal(err)
		}
		if got, err := Running([]int{done.Process.Pid}); err != nil || got {
			t.Errorf("Running(ended) = %v, %v; want false, nil", got, err)
		}
	})
}

// TestGroup: a process group holds its leader and the leader's children,
// and no process outside it.
func TestGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	testutil.Eventually(t, func() error {
		pids, err := Group(cmd.Process.Pid)
		if err != nil {
			return err
		}
		if len(pids) != 2 || !slices.Contains(pids, cmd.Process.Pid) {
			return errors.New("want the shell and its sleep")
		}
		if slices.Contains(pids, os.Getpid()) {
			t.Fatalf("the test's own process is in the group: %v", pids)
		}
		return nil
	})
}

func TestNoProc(t *testing.T) {
	if _, err := group(t.TempDir(), 1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("group without /proc: %v, want ErrUnsupported", err)
	}
	if _, err := running(t.TempDir(), []int{1}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("running without /proc: %v, want ErrUnsupported", err)
	}
}
