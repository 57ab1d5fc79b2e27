package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureSub checks that the folders relay writes credentials, sockets
// and tokens into (agents/, run/, hub/, logs/) are refused when they are
// symbolic links, belong to another user or can be written by others.
func TestEnsureSub(t *testing.T) {
	home := func(t *testing.T) string {
		d := filepath.Join(t.TempDir(), "home")
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("creates every level 0700", func(t *testing.T) {
		h := home(t)
		dir, err := EnsureSub(h, "agents", "default", "Alice")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(h, "agents", "default", "Alice"); dir != want {
			t.Fatalf("EnsureSub = %q, want %q", dir, want)
		}
		for _, p := range []string{"agents", "agents/default", "agents/default/Alice"} {
			fi, err := os.Lstat(filepath.Join(h, p))
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("%s: %v, %v; want a 0700 folder", p, fi, err)
			}
		}
		if _, err := EnsureSub(h, "agents", "default", "Alice"); err != nil {
			t.Fatalf("again: %v", err)
		}
	})
	cases := []struct {
		name  string
		plant func(t *testing.T, h string) // makes h/agents unsafe
		want  string
	}{
		{"symlink to a folder of another user", func(t *testing.T, h string) {
			other := filepath.Join(t.TempDir(), "theirs")
			if err := os.Mkdir(other, 0o777); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 {
				uid, gid := nobody(t)
				if err := os.Chown(other, uid, gid); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(other, filepath.Join(h, "agents")); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"symlink to a folder of ours", func(t *testing.T, h string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(h, "agents")); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"writable by others", func(t *testing.T, h string) {
			d := filepath.Join(h, "agents")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}, "can be written by others"},
		{"a file", func(t *testing.T, h string) {
			if err := os.WriteFile(filepath.Join(h, "agents"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a folder"},
		{"another user's", func(t *testing.T, h string) {
			uid, gid := nobody(t)
			d := filepath.Join(h, "agents")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(d, uid, gid); err != nil {
				t.Fatal(err)
			}
		}, "belongs to nobody"},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			h := home(t)
			tc.plant(t, h)
			_, err := EnsureSub(h, "agents", "default", "Alice")
			var ue *UnsafeError
			if !errors.Is(err, ErrUnsafe) || !errors.As(err, &ue) || ue.Path != filepath.Join(h, "agents") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EnsureSub = %v; want ErrUnsafe on %s saying %q", err, filepath.Join(h, "agents"), tc.want)
			}
			if _, err := os.Lstat(filepath.Join(h, "agents", "default")); err == nil {
				t.Fatal("a folder was created through the refused one")
			}
		})
	}
}
