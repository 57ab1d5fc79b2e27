//go:build lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hub"
)

// The lean build (tag lean) is the relay that `make install` puts on PATH:
// it wraps agents and joins a hub, and links neither nats-server nor the
// dashboard, the MCP server or the memory store (docs/performance.md). Every
// other command runs the full binary, FullBinary beside it, with the same
// arguments, environment and terminal: syscall.Exec replaces this process
// before it has started anything or touched the terminal.

// ErrNoFullBinary means the full binary is not beside the lean one.
var ErrNoFullBinary = errors.New("the full relay binary is missing")

func runUp(_ context.Context, env *Env, args []string) error   { return execFull(env, "up", args) }
func runDown(_ context.Context, env *Env, args []string) error { return execFull(env, "down", args) }
func runCreds(_ context.Context, env *Env, args []string) error {
	return execFull(env, "creds", args)
}
func runInvite(_ context.Context, env *Env, args []string) error {
	return execFull(env, "invite", args)
}
func runDemo(_ context.Context, env *Env, args []string) error { return execFull(env, "demo", args) }
func runMemory(_ context.Context, env *Env, args []string) error {
	return execFull(env, "memory", args)
}
func runDashboard(_ context.Context, env *Env, args []string) error {
	return execFull(env, "dashboard", args)
}
func runDoctor(_ context.Context, env *Env, args []string) error {
	return execFull(env, "doctor", args)
}
func runMCP(_ context.Context, env *Env, args []string) error  { return execFull(env, "mcp", args) }
func runTeam(_ context.Context, env *Env, args []string) error { return execFull(env, "team", args) }
func runAttach(_ context.Context, env *Env, args []string) error {
	return execFull(env, "attach", args)
}

// fullBinary returns the path of FullBinary beside this program, or an
// error wrapping ErrNoFullBinary that says how to install it.
func fullBinary(env *Env) (string, error) {
	exe := env.Executable
	if exe == "" {
		exe = "relay"
	}
	path := filepath.Join(filepath.Dir(exe), FullBinary)
	if err := syscall.Access(path, 1 /* X_OK */); err != nil {
		return "", fmt.Errorf("%w: %s (%v); this relay is the lean build, which only wraps agents and joins a hub. "+
			"Install both with `make install` in relay's source, or build the full one there with "+
			"`go build -tags sqlite_fts5 -o %s ./cmd/relay`", ErrNoFullBinary, path, err, path)
	}
	return path, nil
}

// execFull replaces this process with `relay-hub NAME ARGS...`; it returns
// only when that could not be done.
func execFull(env *Env, name string, args []string) error {
	path, err := fullBinary(env)
	if err != nil {
		return err
	}
	argv := append([]string{path, name}, args...)
	if err := syscall.Exec(path, argv, env.environ()); err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil // not reached
}

// leanWrap runs relay wrap in the full binary for OpenCode, whose replies
// relay reads from its SQLite database (the lean build links no SQLite),
// and fails, naming the missing file, when no hub runs for home and the
// full binary that would start one is missing. Otherwise it returns nil
// and the lean wrapper goes on; with no hub running, the session starts a
// detached one as `relay up --detach`, which this binary hands to the full
// one.
func leanWrap(env *Env, cfg *config.Config, o *wrapOptions, home string, args []string) error {
	if prof, err := registry.For(cfg.Profile, o.Command[0]); err == nil && prof.Name == "opencode" {
		return execFull(env, "wrap", args)
	}
	if cfg.Hub.URL != "" { // a hub named, or none
		return nil
	}
	_, err := fullBinary(env)
	if err == nil {
		return nil
	}
	if _, derr := hub.Discover(home); derr == nil { // probes the hub: only when needed
		return nil
	}
	return fmt.Errorf("no hub runs in %s, and none can be started: %w", home, err)
}
