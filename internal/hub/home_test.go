package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/statedir"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestEnsureRunningRefusesAPlantedToken: a wrapper that would start the
// hub (EnsureRunning) on a token relay did not write is refused before any
// hub starts, with statedir.ErrUnsafe and the fix; Start refuses it too.
func TestEnsureRunningRefusesAPlantedToken(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode os.FileMode
		want string
	}{
		{"0644", 0o644, "can be read or written by others"},
		{"0600 without hub.json", 0o600, "relay did not write it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := testutil.Home(t)
			if err := os.MkdirAll(hub.Dir(home), 0o700); err != nil {
				t.Fatal(err)
			}
			token := filepath.Join(hub.Dir(home), "token")
			if err := os.WriteFile(token, []byte("planted\n"), tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := hub.EnsureRunning(context.Background(), home, "/bin/false")
			if !errors.Is(err, statedir.ErrUnsafe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "rm "+token) {
				t.Errorf("EnsureRunning: %v; want ErrUnsafe saying %q and rm %s", err, tc.want, token)
			}
			h, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: "127.0.0.1:0"})
			if err == nil {
				h.Shutdown()
				t.Fatal("Start adopted the planted token")
			}
			if !errors.Is(err, statedir.ErrUnsafe) {
				t.Errorf("Start: %v; want ErrUnsafe", err)
			}
		})
	}
}

// TestHubFilesArePrivate: a hub started in a new home leaves no file that
// others can read and no folder that others can enter.
func TestHubFilesArePrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new-home")
	h, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	h.Shutdown()
	err = filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %04o", strings.TrimPrefix(p, home), perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
