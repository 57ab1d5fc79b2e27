package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/relayhq/relay/wrapper"
)

// wrapOptions are the parsed flags of `relay wrap`.
type wrapOptions struct {
	Name    string
	Command []string
}

func parseWrap(env *Env, args []string) (*wrapOptions, error) {
	o := &wrapOptions{}
	fs := newFlags(env, "wrap", "[--name NAME] [--] COMMAND [ARGS...]")
	fs.StringVar(&o.Name, "name", "", "the agent's name in the team (default: from COMMAND, made unique)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		return nil, usagef("missing COMMAND to wrap, as in: relay wrap --name Alice -- claude")
	}
	if o.Name == "" {
		o.Name = nameFromCommand(o.Command[0])
	}
	if !validName(o.Name) {
		return nil, usagef("invalid --name %q: use letters, digits, '-' and '_' (at most 64)", o.Name)
	}
	return o, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func validName(s string) bool { return nameRE.MatchString(s) }

// nameFromCommand derives an agent name from the program's file name:
// "/usr/bin/claude" gives "claude".
func nameFromCommand(cmd string) string {
	base := filepath.Base(cmd)
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "agent"
	}
	return b.String()
}

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func runWrap(ctx context.Context, env *Env, args []string) error {
	o, err := parseWrap(env, args)
	if err != nil {
		return err
	}
	home, err := env.EnsureHome()
	if err != nil {
		return err
	}
	session := newSessionID()
	logger, closeLog, err := openLog(home, "wrap-"+o.Name+"-"+session)
	if err != nil {
		return err
	}
	defer closeLog()

	childEnv := append(env.environ(),
		"RELAY_NAME="+o.Name,
		"RELAY_SESSION_ID="+session,
		"RELAY_HOME="+home,
	)
	stdin, _ := env.Stdin.(*os.File)
	opts := wrapper.Options{
		Command: o.Command,
		Env:     childEnv,
		Stdin:   stdin,
		Stdout:  env.Stdout,
		Logger:  logger,
	}
	if stdin == nil {
		return fmt.Errorf("stdin must be a file or terminal")
	}
	code, err := wrapper.Run(ctx, opts, func(s *wrapper.Session) {
		if env.getenv("RELAY_TEST_PANIC") == "1" {
			// For the tests of the terminal's restore after a panic.
			s.Go(func() { panic("RELAY_TEST_PANIC") })
		}
	})
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// openLog opens RELAY_HOME/logs/NAME.log for a command's diagnostics, so
// that nothing but the child ever writes to the human's terminal.
func openLog(home, name string) (*slog.Logger, func(), error) {
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create log folder %s: %w", dir, err)
	}
	path := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}
