package identity

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/relayhq/relay/internal/statedir"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity.json")
	want := File{Name: "Alice", Workspace: "default", Hub: "nats://127.0.0.1:4222", Token: "agent-x", Socket: "/tmp/s"}
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
	}
	env := func(k string) string {
		if k == FileEnv {
			return path
		}
		return ""
	}
	got, err := Read(env)
	if err != nil || got != want {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, want)
	}
	if _, err := Read(func(string) string { return "" }); !errors.Is(err, ErrNoFile) {
		t.Errorf("Read without %s: %v, want ErrNoFile", FileEnv, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(env); !errors.Is(err, statedir.ErrUnsafe) {
		t.Errorf("Read of a file others can read: %v, want statedir.ErrUnsafe", err)
	}
}
