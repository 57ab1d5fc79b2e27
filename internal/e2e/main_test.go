package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// relayBin is the relay binary built once for all the tests.
var relayBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relay-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	relayBin = filepath.Join(dir, "relay")
	build := exec.Command("go", "build", "-race", "-tags", "sqlite_fts5", "-o", relayBin, "github.com/relayhq/relay/cmd/relay")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build relay:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env returns an environment for relay with its own RELAY_HOME and no hub
// (the wrapper alone).
func env(t *testing.T, extra ...string) []string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	return append(os.Environ(), append([]string{"RELAY_HOME=" + home, "RELAY_HUB=none", "TERM=xterm-256color"}, extra...)...)
}
