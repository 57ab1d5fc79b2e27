package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/relayhq/relay"
	"github.com/relayhq/relay/delivery"
)

// wrapOptions are the parsed flags of `relay wrap`.
type wrapOptions struct {
	Name      string
	Profile   string
	Workspace string
	Hub       string
	Delivery  string
	NoPrimer  bool
	Command   []string
}

func parseWrap(env *Env, args []string) (*wrapOptions, error) {
	o := &wrapOptions{}
	fs := newFlags(env, "wrap", "[--name NAME] [--profile P] [--workspace W] [--hub URL] [--] COMMAND [ARGS...]")
	fs.StringVar(&o.Name, "name", env.getenv("RELAY_NAME"), "the agent's name in the team (default: from COMMAND, made unique)")
	fs.StringVar(&o.Profile, "profile", env.getenv("RELAY_PROFILE"), "the agent CLI's profile: claude, codex, gemini, aider, generic (default: from COMMAND)")
	fs.StringVar(&o.Workspace, "workspace", env.getenv("RELAY_WORKSPACE"), "the workspace to join (default: default)")
	fs.StringVar(&o.Hub, "hub", env.getenv("RELAY_HUB"), "a NATS URL, or none to run the agent alone (default: the hub in RELAY_HOME, started if needed)")
	fs.StringVar(&o.Delivery, "delivery", "wait", "how messages are typed in: wait, queue (followUp) or steer")
	fs.BoolVar(&o.NoPrimer, "no-primer", false, "do not teach the agent the protocol at start")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		return nil, usagef("missing COMMAND to wrap, as in: relay wrap --name Alice -- claude")
	}
	if o.Name != "" && !validName(o.Name) {
		return nil, usagef("invalid --name %q: use letters, digits, '-' and '_' (at most 64)", o.Name)
	}
	if _, err := delivery.ParseMode(o.Delivery); err != nil {
		return nil, usagef("--delivery: %v", err)
	}
	return o, nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
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
	stdin, ok := env.Stdin.(*os.File)
	if !ok {
		return fmt.Errorf("stdin must be a file or a terminal")
	}
	logger, closeLog, err := openLog(home, "wrap-"+safeFileName(o.Name, o.Command[0]))
	if err != nil {
		return err
	}
	defer closeLog()
	mode, _ := delivery.ParseMode(o.Delivery)
	r, err := relay.New(relay.Options{
		Name:       o.Name,
		Workspace:  o.Workspace,
		Profile:    o.Profile,
		Home:       home,
		Hub:        o.Hub,
		Token:      env.getenv("RELAY_TOKEN"),
		Executable: env.Executable,
		Delivery:   mode,
		NoPrimer:   o.NoPrimer,
		Stdin:      stdin,
		Stdout:     env.Stdout,
		Env:        env.environ(),
		Logger:     logger,
	})
	if err != nil {
		return usagef("%v", err)
	}
	code, err := r.Wrap(ctx, o.Command[0], o.Command[1:]...)
	if err != nil {
		if errors.Is(err, relay.ErrNameTaken) {
			return usagef("%v", err)
		}
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}
