package agenttest

import (
	"fmt"
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
)

// OfflineOptions configure a CLI whose profile says how it runs offline
// (agents.Profile.Offline): every pinned CLI. The zero value (apart from Model) means defaults.
type OfflineOptions struct {
	// Model is the mock server's base URL, of the API the profile names.
	Model string
	// WorkDir is the project folder the CLI starts in; empty means a fresh
	// temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Binary is the executable; empty means Binary(t, name).
	Binary string
}

// OfflineOf returns how the CLI of profile name runs offline.
func OfflineOf(name string) (agents.Offline, error) {
	p, err := registry.Named(name)
	if err != nil {
		return agents.Offline{}, fmt.Errorf("agent %q: %w", name, err)
	}
	if p.Offline == nil {
		return agents.Offline{}, fmt.Errorf("agent %q: its profile does not say how it runs offline", name)
	}
	return *p.Offline, nil
}

// OfflineCLI returns the command that runs the pinned CLI of profile name
// offline against opts.Model, in a private, temporary HOME that its
// profile's Offline.Setup configures. It skips the test when the CLI is
// not installed.
func OfflineCLI(t testing.TB, name string, opts OfflineOptions) Cmd {
	t.Helper()
	state := forTest(t, name, &opts.Binary, &opts.WorkDir)
	c, err := OfflineCmd(state, name, opts)
	return mustCmd(t, c, err)
}

// OfflineCmd is OfflineCLI for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func OfflineCmd(stateDir, name string, opts OfflineOptions) (Cmd, error) {
	off, err := OfflineOf(name)
	if err != nil {
		return Cmd{}, err
	}
	return OfflineCmdWith(stateDir, name, opts, off.Setup)
}

// OfflineCmdWith is OfflineCmd with setup in place of the profile's
// Offline.Setup: one of the CLI's package's with options of its own
// (claude.OfflineSetup's renderer). Every CLI's command is built here.
func OfflineCmdWith(stateDir, name string, opts OfflineOptions, setup func(agents.OfflineOptions) (agents.OfflineSetup, error)) (Cmd, error) {
	s, err := newCLISetup(name, stateDir, opts.Binary, opts.WorkDir, opts.Model)
	if err != nil {
		return Cmd{}, err
	}
	set, err := setup(agents.OfflineOptions{Home: s.home, Work: s.work, Model: opts.Model})
	if err != nil {
		return Cmd{}, s.wrap(err)
	}
	argv := append(append([]string{opts.Binary}, set.Args...), opts.ExtraArgs...)
	c := s.cmd(argv, set.Env, opts.Env, set.ConfigDir, opts.Cols, opts.Rows)
	c.AnswerQueries = set.AnswerQueries
	return c, nil
}
