package memory

import (
	"context"
	"database/sql"
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

// TestStoreReadsThroughMap checks that every connection of a store reads
// its file through a memory map (mmapSize), the pool's first and those
// it opens later: SQLite's default is none, a pread per page.
func TestStoreReadsThroughMap(t *testing.T) {
	st := openTest(t, nil)
	ctx := context.Background()
	var conns []*sql.Conn
	for range 3 { // held at once: three connections of the pool
		c, err := st.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var n int64
		if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != mmapSize {
			t.Errorf("connection %d: mmap_size %d, want %d", i, n, int64(mmapSize))
		}
	}
}
