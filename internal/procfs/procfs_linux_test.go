package procfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
