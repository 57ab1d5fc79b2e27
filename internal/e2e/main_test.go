package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// relayBin is the relay binary built once for all the tests, with the race
// detector (see race_test.go).
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
	// A relay process started with an environment that did not come from
	// raceEnv still reports its races here (this process's own race
	// detector read GORACE at start and is not affected).
	races := filepath.Join(dir, "races")
	if err := os.Mkdir(races, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("GORACE", goraceFor(races)[len("GORACE="):])
	code := m.Run()
	if reports := raceReports(races); len(reports) > 0 {
		for _, r := range reports {
			fmt.Fprintf(os.Stderr, "FAIL: a relay process (race-built) reported a DATA RACE outside any test's check:\n%s\n", r)
		}
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// env returns an environment for relay with its own RELAY_HOME and no hub
// (the wrapper alone).
func env(t *testing.T, extra ...string) []string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	return append(baseEnv(t), append([]string{"RELAY_HOME=" + home, "RELAY_HUB=none", "TERM=xterm-256color"}, extra...)...)
}
