//go:build !lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/termsafe"
)

// serveMemory opens the memory store in home ([memory] backend and
// embedder of the configuration here) and answers the memory service's
// requests through the hub until the returned stop is called. A
// configuration that does not load leaves memory as it is without one
// (lexical, in home), with a warning.
func serveMemory(ctx context.Context, env *Env, h *hub.Hub, home string, log *slog.Logger) (stop func(), err error) {
	mc, err := memoryConfig(env)
	if err != nil {
		log.Warn("memory: the configuration does not load; serving lexical memory from RELAY_HOME", "err", err)
		mc = config.Memory{}
	}
	st, closeStore, err := openBackend(ctx, env, home, mc, log)
	if err != nil {
		return nil, err
	}
	ep := h.Endpoint()
	nc, err := bus.Dial(ctx, bus.Options{URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin}, "relay-memory")
	if err != nil {
		closeStore()
		return nil, fmt.Errorf("connect the memory service to the hub: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	// Live before it returns: a `relay memory save` right after the hub
	// says it is up must find the service.
	wait, err := memory.Start(ctx, nc, memory.DefaultSubjectPrefix, st)
	if err != nil {
		cancel()
		nc.Close()
		closeStore()
		return nil, fmt.Errorf("start the memory service: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- wait() }()
	return func() {
		cancel()
		<-done
		nc.Close()
		closeStore()
	}, nil
}

// upOptions are the flags of `relay up`.
type upOptions struct {
	listen          string
	detach          bool
	tlsCert, tlsKey string
	dashboard       string // host:port, "" for the default, "off"
	dashboardRemote bool
	maxStore        int64  // bytes; 0 means hub.DefaultMaxStore
	join            string // a ticket of relay invite, or @FILE
	leafListen      string
	leave           bool
}

func runUp(ctx context.Context, env *Env, args []string) error {
	var o upOptions
	fs := newFlags(env, "up", "[--listen ADDR] [--dashboard ADDR|off] [--detach]")
	fs.StringVar(&o.listen, "listen", "", "`host:port` to listen on (default: 127.0.0.1, the port of last time or a random one)")
	fs.BoolVar(&o.detach, "detach", false, "run in the background; stop it with relay down")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate `file` (PEM); needed to listen beyond loopback")
	fs.StringVar(&o.tlsKey, "tls-key", "", "TLS key `file` (PEM)")
	fs.StringVar(&o.dashboard, "dashboard", "", "`host:port` of the web dashboard, or off (default: 127.0.0.1, the port of last time or a random one)")
	fs.Func("max-store", "`size` of the hub's message store, in bytes or with K, M, G (default 1G); the hub also leaves a quarter of its disk's free space unused", func(v string) error {
		n, err := parseSize(v)
		o.maxStore = n
		return err
	})
	fs.BoolVar(&o.dashboardRemote, "dashboard-remote", false, "let the dashboard listen beyond loopback over plain HTTP (behind a TLS proxy or an SSH tunnel)")
	addLeafFlags(fs, &o)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if err := checkDashboardFlag(o); err != nil {
		return err
	}
	home, err := env.EnsureHome()
	if err != nil {
		return err
	}
	join, err := prepareJoin(home, o)
	if err != nil {
		return err
	}
	if o.detach {
		return upDetached(ctx, env, home, o)
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := hub.Start(ctx, hub.Options{
		Home: home, Listen: o.listen, TLSCert: o.tlsCert, TLSKey: o.tlsKey, MaxStore: o.maxStore,
		LeafListen: o.leafListen, Join: join,
		Logger: logger,
		// Live before hub.json names the hub: a wrapper that finds the hub
		// and saves a memory at once finds the service.
		Services: func(h *hub.Hub) (func(), error) {
			if h.Joined() != nil { // a leaf's agents use the team hub's memory
				return func() {}, nil
			}
			return serveMemory(ctx, env, h, home, logger)
		},
	})
	if errors.Is(err, hub.ErrNotLoopback) {
		return usagef("%v (--tls-cert, --tls-key)", err)
	}
	if err != nil {
		return err
	}
	stopDashboard, err := serveDashboard(env, h, o)
	if err != nil {
		h.Shutdown()
		return err
	}
	fmt.Fprintf(env.Stdout, "relay hub listening on %s\ntoken in %s; memory in %s; stop with Ctrl-C\n",
		h.URL(), filepath.Join(hub.Dir(home), "token"), memory.DefaultPath(home))
	if url, _, err := hub.Dashboard(home); err == nil {
		fmt.Fprintf(env.Stdout, "dashboard on %s (open it with: relay dashboard --open)\n", url)
	}
	printLeaf(env, h)
	<-ctx.Done()
	stopDashboard()
	h.Shutdown() // the memory service first
	fmt.Fprintln(env.Stdout, "relay hub stopped")
	return nil
}

func upDetached(ctx context.Context, env *Env, home string, o upOptions) error {
	if ep, err := hub.Discover(home); err == nil {
		fmt.Fprintf(env.Stdout, "relay hub already running on %s\n", termsafe.Line(ep.URL))
		return nil
	}
	var args []string
	if o.listen != "" {
		args = append(args, "--listen", o.listen)
	}
	if o.tlsCert != "" {
		args = append(args, "--tls-cert", o.tlsCert, "--tls-key", o.tlsKey)
	}
	if o.dashboard != "" {
		args = append(args, "--dashboard", o.dashboard)
	}
	if o.dashboardRemote {
		args = append(args, "--dashboard-remote")
	}
	if o.maxStore != 0 {
		args = append(args, "--max-store", strconv.FormatInt(o.maxStore, 10))
	}
	if o.leafListen != "" {
		args = append(args, "--leaf-listen", o.leafListen)
	}
	ep, err := hub.StartDetached(ctx, hub.DetachOptions{Home: home, Executable: env.Executable, Args: args, Env: env.environ()})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "relay hub running on %s (log: %s); stop it with relay down\n",
		ep.URL, filepath.Join(hub.Dir(home), "hub.log"))
	if o.dashboard != "off" {
		if durl := waitDashboard(ctx, home); durl != "" {
			fmt.Fprintf(env.Stdout, "dashboard on %s (open it with: relay dashboard --open)\n", termsafe.Line(durl))
		}
	}
	return nil
}

// parseSize reads a byte count: 1048576, 512K, 64M, 2G (powers of 1024).
func parseSize(v string) (int64, error) {
	mult := int64(1)
	s := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(v), "B"), "I")
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult, s = 1<<10, s[:len(s)-1]
		case 'M':
			mult, s = 1<<20, s[:len(s)-1]
		case 'G':
			mult, s = 1<<30, s[:len(s)-1]
		case 'T':
			mult, s = 1<<40, s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q: want a size such as 1073741824, 512M or 2G", v)
	}
	return n * mult, nil
}

func runDown(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "down", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	home, err := env.Home()
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	url, err := hub.Stop(sctx, home)
	if errors.Is(err, hub.ErrNoHub) {
		fmt.Fprintln(env.Stdout, termsafe.Text(err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "relay hub on %s stopped\n", termsafe.Line(url))
	return nil
}
