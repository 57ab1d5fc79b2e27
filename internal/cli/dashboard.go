//go:build !lean

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/termsafe"
)

// checkDashboardFlag refuses a bad --dashboard before anything starts.
func checkDashboardFlag(o upOptions) error {
	if o.dashboard == "" || o.dashboard == "off" {
		return nil
	}
	if err := dashboard.CheckAddr(o.dashboard, o.tlsCert != "", o.dashboardRemote); err != nil {
		if errors.Is(err, dashboard.ErrNotLoopback) {
			return usagef("--dashboard: %v (--tls-cert and --tls-key, or --dashboard-remote)", err)
		}
		return usagef("--dashboard: %v", err)
	}
	return nil
}

func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveDashboard starts the hub's dashboard as o asks and records its URL in
// the hub's home; stop closes it. The default dashboard (no --dashboard)
// that cannot start is only a warning.
func serveDashboard(env *Env, h *hub.Hub, o upOptions) (stop func(), err error) {
	if o.dashboard == "off" {
		return func() {}, nil
	}
	ep := h.Endpoint()
	do := dashboard.Options{
		URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin, Addr: o.dashboard, PreferPort: h.LastDashboardPort(),
		AllowRemote: o.dashboardRemote,
		Logger:      slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if o.dashboard != "" && !loopbackAddr(o.dashboard) && o.tlsCert != "" {
		do.TLSCert, do.TLSKey = o.tlsCert, o.tlsKey
	}
	d, err := dashboard.New(do)
	if errors.Is(err, dashboard.ErrNotLoopback) {
		return nil, usagef("--dashboard: %v", err)
	}
	if err != nil && o.dashboard == "" { // not asked for: the hub matters more
		fmt.Fprintf(env.Stderr, "relay up: no dashboard: %v\n", err)
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.SetDashboard(d.URL()); err != nil {
		d.Close()
		return nil, err
	}
	return func() {
		_ = h.SetDashboard("")
		d.Close()
	}, nil
}

// waitDashboard waits a little for a detached hub to record its dashboard.
func waitDashboard(ctx context.Context, home string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		u, _, err := hub.Dashboard(home)
		if err == nil {
			return u
		}
		if !errors.Is(err, hub.ErrNoDashboard) {
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dashboardOptions are the flags of `relay dashboard`.
type dashboardOptions struct {
	open, json bool
}

func runDashboard(ctx context.Context, env *Env, args []string) error {
	var o dashboardOptions
	fs := newFlags(env, "dashboard", "[--open] [--json]")
	fs.BoolVar(&o.open, "open", false, "open the dashboard in the browser (xdg-open)")
	fs.BoolVar(&o.json, "json", false, "print {\"url\", \"open_url\"} as JSON")
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
	base, token, err := hub.Dashboard(home)
	if errors.Is(err, hub.ErrNoHub) {
		return fmt.Errorf("%w; start one with relay up (or relay up --detach)", err)
	}
	if err != nil {
		return err
	}
	open := base + "?token=" + url.QueryEscape(token)
	if o.json {
		b, _ := json.Marshal(map[string]string{"url": base, "open_url": open})
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		fmt.Fprintln(env.Stdout, termsafe.Line(open)) // read from hub.json
	}
	if !o.open {
		return nil
	}
	return openBrowser(ctx, env, home, open)
}

// openBrowser opens target with xdg-open through a 0600 redirect file in
// the hub's folder, so that the token does not show in the process list.
func openBrowser(ctx context.Context, env *Env, home, target string) error {
	page := filepath.Join(hub.Dir(home), "dashboard.html")
	esc := html.EscapeString(target)
	doc := "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url=" + esc + "\">" +
		"<title>relay dashboard</title><a href=\"" + esc + "\">Open the relay dashboard</a>\n"
	if err := os.WriteFile(page, []byte(doc), 0o600); err != nil {
		return fmt.Errorf("open dashboard: %w", err)
	}
	opener := "xdg-open"
	path, err := exec.LookPath(opener)
	if err != nil {
		return fmt.Errorf("open dashboard: %s not found; open the address above in a browser", opener)
	}
	cmd := exec.CommandContext(ctx, path, page)
	cmd.Env = env.environ()
	cmd.Stdout, cmd.Stderr = env.Stderr, env.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("open dashboard with %s: %w; open the address above in a browser", opener, err)
	}
	return nil
}
