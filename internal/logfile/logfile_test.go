package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.log")
	write := func(s string) {
		t.Helper()
		f, err := Open(path, 16)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("appends while small", func(t *testing.T) {
		write("run 1\n")
		write("run 2\n")
		if got := read(path); got != "run 1\nrun 2\n" {
			t.Errorf("log = %q, want both runs", got)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode = %v (%v), want 0600: logs name agents and hubs", fi.Mode().Perm(), err)
		}
	})
	t.Run("rotates past the limit", func(t *testing.T) {
		write(strings.Repeat("x", 20) + "\n")
		write("run 4\n")
		if got := read(path); got != "run 4\n" {
			t.Errorf("log = %q, want only the new run", got)
		}
		if got := read(path + ".1"); !strings.HasPrefix(got, "run 1\n") {
			t.Errorf("previous log = %q, want the earlier runs kept", got)
		}
	})
	t.Run("keeps two files", func(t *testing.T) {
		write(strings.Repeat("y", 20) + "\n")
		write("run 6\n")
		if got := read(path + ".1"); !strings.HasPrefix(got, "run 4\n") {
			t.Errorf("previous log = %q, want the run before replacing the oldest", got)
		}
		if m, _ := filepath.Glob(path + "*"); len(m) != 2 {
			t.Errorf("files %q, want 2", m)
		}
	})
	t.Run("error names the file", func(t *testing.T) {
		_, err := Open(filepath.Join(dir, "missing", "x.log"), 0)
		if err == nil || !strings.Contains(err.Error(), "missing/x.log") {
			t.Errorf("err = %v, want one naming the path", err)
		}
	})
}
