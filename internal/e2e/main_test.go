package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// relayBin is the relay binary built once for all the tests, with the race
// detector (see race_test.go), or the one RELAY_E2E_RELAY names.
var relayBin string

// runDir is the run's temporary folder, removed after the tests: binaries
// built once for every test (relay, nats-server) go there.
var runDir string

// relayBinEnv names a relay binary to test instead of building one with
// the race detector: `make bench` measures the CLIs' round trip with the
// binary users run (bin/relay), whose timings the detector would slow.
const relayBinEnv = "RELAY_E2E_RELAY"

// testedRelay returns the relay binary the tests run: $RELAY_E2E_RELAY
// (an absolute path: go test runs in the package's folder), else one built
// with the race detector into dir.
func testedRelay(dir string) (string, error) {
	if p := os.Getenv(relayBinEnv); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("%s=%s: want an absolute path (go test runs in the package's folder), e.g. $PWD/bin/relay", relayBinEnv, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", relayBinEnv, err)
		}
		return p, nil
	}
	bin := filepath.Join(dir, "relay")
	build := exec.Command("go", "build", "-race", "-tags", "sqlite_fts5", "-o", bin, "github.com/relayhq/relay/cmd/relay")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build relay: %w", err)
	}
	return bin, nil
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relay-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runDir = dir
	// Started under nohup (SIGHUP ignored), every relay these tests run
	// would inherit the ignored SIGHUP, and the tests that hang relay up
	// before it catches signals would wait for a death that never comes.
	// A caught signal is reset to its default in a child: catch it here.
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	if relayBin, err = testedRelay(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
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
