package memory

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestStoreFilesArePrivate opens a store under a permissive umask, writes
// to it (so that SQLite creates its -wal and -shm files) and checks that
// no file of it can be read by other users; a store an older relay left
// 0644 is made private when opened.
func TestStoreFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, whatever the test runner's
	defer syscall.Umask(old)
	check := func(t *testing.T, path string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(p), err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %04o, want 0600", filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	save := func(t *testing.T, path string) *Store {
		t.Helper()
		s, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Save(context.Background(), Memory{Text: "deploys need the VPN", Workspace: "default"}); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("new store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memory.db")
		s := save(t, path)
		defer s.Close()
		check(t, path)
	})
	t.Run("store an older relay left 0644", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memory.db")
		s := save(t, path)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s2 := save(t, path)
		defer s2.Close()
		s.Close()
		check(t, path)
	})
}
