package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/relayhq/relay"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/session"
)

// wrapOptions are the parsed flags of `relay wrap`.
type wrapOptions struct {
	Name      string
	Profile   string
	Workspace string
	Hub       string
	TLSCA     string
	Delivery  string
	NoPrimer  bool
	Prompt    string
	Command   []string
}

func parseWrap(env *Env, args []string) (*wrapOptions, error) {
	o := &wrapOptions{}
	fs := newFlags(env, "wrap", "[--name NAME] [--profile P] [--workspace W] [--hub URL] [--] COMMAND [ARGS...]")
	fs.StringVar(&o.Name, "name", "", "the agent's name in the team (default: RELAY_NAME, config, or from COMMAND, made unique)")
	fs.StringVar(&o.Profile, "profile", "", "the agent CLI's profile: "+strings.Join(registry.Names(), ", ")+" (default: from COMMAND)")
	fs.StringVar(&o.Workspace, "workspace", "", "the workspace to join (default: RELAY_WORKSPACE, config, or default)")
	fs.StringVar(&o.Hub, "hub", "", "a NATS URL, or none to run the agent alone (default: RELAY_HUB, config, or the hub in RELAY_HOME, started if needed)")
	fs.StringVar(&o.TLSCA, "tls-ca", "", "PEM `file` of the CA that signed a TLS hub's certificate (default: RELAY_TLS_CA, config)")
	fs.StringVar(&o.Delivery, "delivery", "", "how messages are typed in: batch (all that waits, at each idle moment), wait (one per idle moment), queue (followUp) or steer (default: config, or batch)")
	fs.BoolVar(&o.NoPrimer, "no-primer", false, "do not teach the agent the protocol at start")
	fs.StringVar(&o.Prompt, "prompt", "", "`text` typed into the agent once, when it is first ready (its role in a team)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	o.Command = fs.Args()
	if len(o.Command) == 0 {
		return nil, usagef("missing COMMAND to wrap, as in: relay wrap --name Alice -- claude")
	}
	if o.Name != "" {
		if err := bus.ValidName("agent", o.Name); err != nil {
			return nil, usagef("--name: %v", err)
		}
	}
	if o.Delivery != "" {
		if _, err := delivery.ParseMode(o.Delivery); err != nil {
			return nil, usagef("--delivery: %v", err)
		}
	}
	return o, nil
}

func runWrap(ctx context.Context, env *Env, args []string) error {
	// First: changing GOMAXPROCS stops the world and empties the caches of
	// the processors it removes, whose cost grows with what they hold (3 %
	// of a start's CPU when it came after the hub link, issue 34). The lean
	// relay has done it in its first package inits (internal/oneproc),
	// when they held next to nothing; then this changes nothing.
	oneProc(env)
	o, err := parseWrap(env, args)
	if err != nil {
		return err
	}
	// Before anything is created or started (state folder, hub, log).
	if _, err := session.LookPath(o.Command[0], env.environ(), ""); err != nil {
		return err
	}
	cfg, err := loadConfig(env, configOptions{flags: config.Flags{Name: o.Name, Workspace: o.Workspace, Hub: o.Hub, Profile: o.Profile, TLSCA: o.TLSCA}})
	if err != nil {
		return err
	}
	home, err := env.EnsureHome()
	if err != nil {
		return err
	}
	if err := leanWrap(env, cfg, o, home, args); err != nil {
		return err
	}
	stdin, ok := env.Stdin.(*os.File)
	if !ok {
		return fmt.Errorf("stdin must be a file or a terminal")
	}
	logger, closeLog, err := openLog(home, "wrap-"+safeFileName(cfg.Name, o.Command[0]))
	if err != nil {
		return err
	}
	defer closeLog()
	mode := delivery.Mode(cfg.Delivery.Mode)
	if o.Delivery != "" {
		mode, _ = delivery.ParseMode(o.Delivery)
	}
	hr := hubResolver(env, cfg) // as relay send: the environment over the file
	token, err := hr.HubToken()
	if err != nil {
		return err
	}
	r, err := relay.New(relay.Options{
		Name:          cfg.Name,
		Workspace:     cfg.Workspace,
		Profile:       cfg.Profile,
		Home:          home,
		Hub:           hr.URL,
		Token:         token,
		Creds:         hr.Creds,
		TLSCA:         hr.TLSCA,
		Executable:    env.Executable,
		Delivery:      mode,
		HumanQuiet:    cfg.Delivery.HumanQuiet,
		IdleQuiet:     configured(cfg, "delivery.idle_quiet_ms", cfg.Delivery.IdleQuiet),
		MaxBodyBytes:  cfg.Delivery.MaxBodyBytes,
		StuckAfter:    cfg.Delivery.StuckAfter,
		Damping:       delivery.DamperOptions(cfg.Damping),
		MemoryAtStart: cfg.Memory.LoadAtStart,
		NoPrimer:      o.NoPrimer,
		Prompt:        o.Prompt,
		NoMCP:         !cfg.MCP,
		Stdin:         stdin,
		Stdout:        env.Stdout,
		Env:           env.environ(),
		Logger:        logger,
	})
	if err != nil {
		return usagef("%v", err)
	}
	if err := r.UseConfig(cfg); err != nil {
		return usagef("%v", err)
	}
	// The wrapped session handles its signals itself (SIGINT reaches the
	// agent as the key would, SIGTERM ends it, either before it starts
	// ends the session): the interrupt that ends Main's context must not
	// stop the session's stages while the agent goes on.
	bound := boundMemory(env)
	defer bound.Stop()
	code, err := r.Wrap(context.WithoutCancel(ctx), o.Command[0], o.Command[1:]...)
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

// configured returns v when the configuration set key, and zero when v is
// only the default: then the agent's profile chooses.
func configured[T any](cfg *config.Config, key string, v T) T {
	var zero T
	if cfg.Source(key).Kind == config.FromDefault {
		return zero
	}
	return v
}

// wrapMemoryLimit is the soft limit of a wrapper's Go memory (heap,
// stacks, runtime): a dozen wrappers run on one machine, and a burst of
// messages would otherwise let the heap grow to twice what is live before
// the collector runs (issue 34). A soft limit: the collector works harder
// near it, never fails an allocation. GOMEMLIMIT, when set, wins.
// 10 MB was tried: the peak after a 5,000-message stream fell from 11.8 to
// 8.5 MB, but 50 MB shown through the wrapper took five times the CPU (the
// scanner's history holds several MB live during a flood, so the
// collector ran without pause).
const wrapMemoryLimit = 16 << 20

// freeAfterStart is when the start-up's garbage (configuration, profiles,
// the hub link) is collected and handed back to the system once: an idle
// wrapper then holds only what it uses.
const freeAfterStart = 3 * time.Second

// boundMemory sets the wrapper's memory limit and collects the start-up's
// garbage once it is over; Stop cancels the latter.
func boundMemory(env *Env) *time.Timer {
	if env.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(wrapMemoryLimit)
	}
	return time.AfterFunc(freeAfterStart, debug.FreeOSMemory)
}

// oneProc runs the wrapper's Go code on one thread at a time (GOMAXPROCS
// 1; GOMAXPROCS, when set, wins). Its work is small and comes in chunks
// (a frame of output, a message): with a second processor idle, every
// goroutine a chunk wakes (the scanner, the screen's publisher) wakes a
// second thread too, a futex and a context switch each time. Spinner
// child, wrapper CPU: 0.48 -> 0.45 s/min with the pty on the netpoller
// (issue 34). The lean relay sets it before its package inits
// (internal/oneproc); the full one, relay-hub, runs the hub and the
// dashboard on every processor, and wraps OpenCode with this.
func oneProc(env *Env) {
	if env.getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
