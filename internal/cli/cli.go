// Package cli is relay's command line: it parses flags into options and
// hands them to the packages that do the work. It holds no logic of its own
// beyond wiring, so that every command can be tested with in-memory streams.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/statedir"
	"github.com/relayhq/relay/internal/termsafe"
)

// Exit codes shared by every command.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // a runtime failure
	ExitUsage   = 2 // a usage or configuration error
)

// Env is what a command may touch of the outside world. Tests build one with
// in-memory streams; System returns the process's own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads an environment variable; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment handed to children; nil means os.Environ().
	Environ []string
	// Executable is the path of the relay binary, for commands that start
	// themselves again (a detached hub, hooks).
	Executable string
}

// System returns the Env of the running process.
func System() *Env {
	exe, _ := os.Executable()
	return &Env{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Environ:    os.Environ(),
		Executable: exe,
	}
}

func (e *Env) getenv(key string) string {
	if e.Getenv == nil {
		return os.Getenv(key)
	}
	return e.Getenv(key)
}

func (e *Env) environ() []string {
	if e.Environ == nil {
		return os.Environ()
	}
	return e.Environ
}

// Home returns the state folder (statedir.Lookup: RELAY_HOME, else
// $XDG_STATE_HOME/relay, else ~/.local/state/relay) without creating it. It
// refuses (statedir.ErrUnsafe) a folder that another user owns or others can
// write, saying how to fix it.
func (e *Env) Home() (string, error) {
	dir, err := statedir.Lookup(e.getenv)
	if err != nil {
		return "", err
	}
	if err := statedir.CheckDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// EnsureHome returns Home after creating it with mode 0700.
func (e *Env) EnsureHome() (string, error) {
	dir, err := statedir.Lookup(e.getenv)
	if err != nil {
		return "", err
	}
	if err := statedir.Ensure(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// command is one sub-command: its one-line summary and its run function.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"wrap":      {"wrap an agent CLI in a pseudo-terminal and join the team", runWrap},
		"version":   {"print relay's version", runVersion},
		"scan":      {"extract @namespace commands from a recorded terminal stream", runScan},
		"up":        {"run the hub (NATS, memory, dashboard)", runUp},
		"down":      {"stop a detached hub", runDown},
		"creds":     {"make relay's NATS identities for an external cluster (init, issue, revoke, list)", runCreds},
		"invite":    {"invite a machine to join this team hub as a leaf (a ticket for relay up --join)", runInvite},
		"send":      {"send a message to an agent or to all (*)", runSend},
		"agents":    {"list the agents and their states", runAgents},
		"log":       {"show the message history with delivery status", runLog},
		"demo":      {"watch three scripted agents talk through an embedded hub", runDemo},
		"memory":    {"save, search, list and forget shared memories", runMemory},
		"config":    {"check or show the merged configuration", runConfig},
		"dashboard": {"print or open the dashboard's address", runDashboard},
		"doctor":    {"check the hub, the state folder and the agent CLIs", runDoctor},
		"hook":      {"forward an agent CLI's hook to its relay wrapper (run by the CLI)", runHook},
		"stop":      {"end a wrapped agent gracefully (SessionEnd hooks, its last turn, then exit)", runStop},
		"approvals": {"list the permission prompts the team's agents wait on", runApprovals},
		"approve":   {"answer an agent's permission prompt (allow, or --deny)", runApprove},
		"mcp":       {"serve the team's tools (send, agents, memory…) over MCP on stdio", runMCP},
		"team":      {"start, list or stop a team of agents from .relay/team.toml (up, status, down)", runTeam},
		"attach":    {"show a team agent's tmux window (relay team up)", runAttach},
	}
}

// UsageError is a mistake in how relay was called: it prints usage and
// exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ExitError carries an exit code chosen by the command (for example the
// wrapped child's status) without a message of its own.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Main runs relay with args (without the program name) and returns the exit
// code.
func Main(args []string, env *Env) int {
	// No relay process reads nats-server's CPU sampling; it would wake
	// every idle wrapper once a second.
	hub.StopProcSampling()
	cmds := commands()
	if len(args) == 0 {
		printUsage(env.Stderr, cmds)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) < 2 || args[1] == "-h" || args[1] == "--help" {
			printUsage(env.Stdout, cmds)
			return ExitOK
		}
		// relay help CMD is relay CMD -h.
		name, args = args[1], []string{args[1], "-h"}
	case "-v", "--version":
		name = "version"
	}

	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "relay: unknown command %q\n\n", name)
		printUsage(env.Stderr, cmds)
		return ExitUsage
	}
	ctx := context.Background()
	// relay wrap catches the signals that end a session itself, from its
	// first step (wrapper.CatchSignals): one caught here first would be
	// swallowed, and the session would start its agent after a SIGTERM.
	// Until then a signal has its default effect, with the terminal not
	// yet touched.
	if name != "wrap" {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	err := cmd.run(ctx, env, args[1:])
	return exitCode(env.Stderr, name, err)
}

func exitCode(stderr io.Writer, name string, err error) int {
	var ue *UsageError
	var ee *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "relay %s: %s\nRun 'relay %s -h' for usage.\n", name, termsafe.Text(ue.Msg), name)
		return ExitUsage
	default:
		// An error may quote a peer, the hub or a file: show it, never obey it.
		fmt.Fprintf(stderr, "relay %s: %s\n", name, termsafe.Text(err.Error()))
		return ExitFailure
	}
}

func printUsage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Usage: relay COMMAND [FLAGS] [ARGS]\n\nCommands:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\nEvery command honours RELAY_HOME (state folder) and --hub / RELAY_HUB (a NATS URL).\n")
	b.WriteString("Run 'relay help COMMAND' (or 'relay COMMAND -h') for a command's flags and the configuration keys it reads.\n")
	io.WriteString(w, b.String())
}

// newFlags returns a FlagSet for a sub-command that reports errors as usage
// errors and prints its usage to stderr.
func newFlags(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("relay "+name, flag.ContinueOnError)
	out := &flagOutput{w: env.Stderr}
	fs.SetOutput(out)
	fs.Usage = func() {
		// Asked for with -h (nothing was said before the usage), the
		// usage is the answer and goes to stdout; after a mistake it
		// goes to stderr with it.
		w := env.Stderr
		if !out.wrote {
			w = env.Stdout
		}
		fs.SetOutput(w)
		defer fs.SetOutput(out)
		fmt.Fprintf(w, "Usage: relay %s %s\n", name, synopsis)
		if hasFlags(fs) {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
		cmd, _, _ := strings.Cut(name, " ")
		printKeys(w, cmd)
	}
	return fs
}

// flagOutput is where the flag package writes its complaints; it records
// that one was written, so that the usage after it goes to stderr too.
type flagOutput struct {
	w     io.Writer
	wrote bool
}

func (o *flagOutput) Write(p []byte) (int, error) {
	o.wrote = true
	return o.w.Write(p)
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseFlags parses args with fs; a flag error becomes a usage error (the
// flag package has already printed what was wrong and the usage).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &ExitError{Code: ExitUsage}
	}
	return nil
}
