package statedir

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"RELAY_HOME first", map[string]string{"RELAY_HOME": "/r", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/r"},
		{"XDG_STATE_HOME next", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/relay"},
		{"HOME last", map[string]string{"HOME": "/h"}, "/h/.local/state/relay"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Lookup(func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Errorf("Lookup = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// nobody returns the uid and gid of user nobody, skipping the test when
// it cannot hand files to another user (not root, or no such user).
func nobody(t *testing.T) (int, int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user (chown); run as root to check foreign ownership")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

func TestCheckDir(t *testing.T) {
	mk := func(t *testing.T, mode os.FileMode) string {
		d := filepath.Join(t.TempDir(), "home")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("private folder is used", func(t *testing.T) {
		if err := CheckDir(mk(t, 0o700)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("readable folder is used", func(t *testing.T) {
		if err := CheckDir(mk(t, 0o755)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing folder is fine", func(t *testing.T) {
		if err := CheckDir(filepath.Join(t.TempDir(), "none")); err != nil {
			t.Fatal(err)
		}
	})
	for _, mode := range []os.FileMode{0o777, 0o770, 0o702} {
		t.Run("mode "+strconv.FormatUint(uint64(mode), 8)+" is refused", func(t *testing.T) {
			d := mk(t, mode)
			err := CheckDir(d)
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "fix: chmod 700 "+d) {
				t.Fatalf("CheckDir(%04o) = %v; want ErrUnsafe with fix chmod 700", mode, err)
			}
		})
	}
	t.Run("folder of another user is refused", func(t *testing.T) {
		uid, gid := nobody(t)
		d := mk(t, 0o700)
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
		err := CheckDir(d)
		if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "belongs to nobody") || !strings.Contains(err.Error(), "chown -R") {
			t.Fatalf("CheckDir = %v; want ErrUnsafe naming nobody and a fix", err)
		}
	})
	t.Run("Ensure creates 0700", func(t *testing.T) {
		d := filepath.Join(t.TempDir(), "a", "b")
		if err := Ensure(d); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(d); fi.Mode().Perm() != 0o700 {
			t.Fatalf("mode %04o, want 0700", fi.Mode().Perm())
		}
	})
}

func TestSecret(t *testing.T) {
	write := func(t *testing.T, mode os.FileMode) string {
		p := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(p, []byte("s3cret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("0600 is read", func(t *testing.T) {
		b, err := ReadSecret(write(t, 0o600))
		if err != nil || string(b) != "s3cret\n" {
			t.Fatalf("ReadSecret = %q, %v", b, err)
		}
	})
	for _, mode := range []os.FileMode{0o644, 0o640, 0o666} {
		t.Run("mode "+strconv.FormatUint(uint64(mode), 8)+" is refused", func(t *testing.T) {
			p := write(t, mode)
			_, err := ReadSecret(p)
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "fix: rm "+p) {
				t.Fatalf("ReadSecret(%04o) = %v; want ErrUnsafe with fix rm", mode, err)
			}
		})
	}
	t.Run("a symlink is not followed", func(t *testing.T) {
		p := write(t, 0o600)
		l := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(p, l); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSecret(l); err == nil {
			t.Fatal("ReadSecret followed a symlink")
		}
	})
	t.Run("a file of another user is refused", func(t *testing.T) {
		uid, gid := nobody(t)
		p := write(t, 0o600)
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSecret(p); !errors.Is(err, ErrUnsafe) {
			t.Fatalf("ReadSecret = %v; want ErrUnsafe", err)
		}
	})
}
