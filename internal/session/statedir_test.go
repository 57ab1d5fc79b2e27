package session

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/statedir"
)

// TestRunRefusesSymlinkedAgentsFolder: a RELAY_HOME/agents that is a
// symbolic link into another folder (another user's, say) would receive the
// agent's credential (identity.json) and journal. Run refuses it before the
// agent starts and writes nothing there.
func TestRunRefusesSymlinkedAgentsFolder(t *testing.T) {
	h := hubtest.Start(t)
	home := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	theirs := t.TempDir()
	if err := os.Symlink(theirs, filepath.Join(home, "agents")); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "started")
	var stderr bytes.Buffer
	_, err := Run(context.Background(), Config{
		Name: "Alice", Workspace: "default", Home: home, Hub: h.URL(), Token: h.Token(),
		Command: "sh", Args: []string{"-c", "touch " + marker},
		Stdout: &bytes.Buffer{}, Stderr: &stderr,
	})
	if !errors.Is(err, statedir.ErrUnsafe) {
		t.Fatalf("Run: %v; want statedir.ErrUnsafe", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the agent was started")
	}
	var found []string
	_ = filepath.Walk(theirs, func(p string, _ os.FileInfo, _ error) error {
		if p != theirs {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("relay wrote into the folder the link points at: %v", found)
	}
}
