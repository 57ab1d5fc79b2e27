//go:build !lean

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/natscreds"
)

const credsUsage = `init [--out DIR] | issue NAME --out FILE [--dir DIR] [--workspace WS] | revoke NAME [--dir DIR] [--workspace WS] [--hub URL] | list [--dir DIR]

relay's identities on an external NATS deployment (decentralized JWTs, as nsc makes them):
  init     an operator, a system account and relay's account in DIR (default RELAY_HOME/creds),
           the server include DIR/relay-server.conf and the administrator's DIR/admin.creds
  issue    agent NAME's .creds: what its wrapper and the agent may do, and nothing of other agents
  revoke   revoke every key of NAME in the account; with --hub (or RELAY_HUB) the running servers
           get the account at once (through DIR/sys.creds) and close NAME's connections
  list     the issued agents`

// credsOptions are the flags of `relay creds`.
type credsOptions struct {
	dir, out, workspace, hub, tlsCA string
}

// runCreds makes, issues and revokes relay's NATS JWT identities.
func runCreds(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("want a sub-command: init, issue, revoke or list")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "init", "issue", "revoke", "list":
	case "-h", "--help", "help":
		fmt.Fprintf(env.Stdout, "Usage: relay creds %s\n", credsUsage)
		return nil
	default:
		return usagef("unknown sub-command %q (want init, issue, revoke or list)", sub)
	}
	var o credsOptions
	fs := newFlags(env, "creds "+sub, credsSynopsis(sub))
	if sub == "init" {
		fs.StringVar(&o.dir, "out", "", "`folder` for the keys and the server include (default: RELAY_HOME/creds)")
	} else {
		fs.StringVar(&o.dir, "dir", "", "the `folder` relay creds init made (default: RELAY_HOME/creds)")
	}
	if sub == "issue" || sub == "revoke" {
		fs.StringVar(&o.workspace, "workspace", "", "the agent's `workspace` (default: RELAY_WORKSPACE, the project's, default)")
	}
	if sub == "issue" {
		fs.StringVar(&o.out, "out", "", "the .creds `file` to write (0600)")
	}
	if sub == "revoke" {
		fs.StringVar(&o.hub, "hub", "", "a `URL` of the running servers, to update them at once (default: RELAY_HUB)")
		fs.StringVar(&o.tlsCA, "tls-ca", "", "PEM `file` of the CA that signed the servers' certificate")
	}
	name, err := parseCredsArgs(fs, sub, rest)
	if err != nil {
		return err
	}
	if o.dir == "" {
		home, err := env.Home()
		if err != nil {
			return err
		}
		o.dir = filepath.Join(home, "creds")
	}
	switch sub {
	case "init":
		if err := natscreds.Init(o.dir); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "relay's operator and account are in %s (keep its *.nk seeds and *.creds private: they are 0600).\n", o.dir)
		fmt.Fprintf(env.Stdout, "Add `include %s` to each nats-server's configuration (beside jetstream, listen and cluster),\n", natscreds.Include)
		fmt.Fprintf(env.Stdout, "copying %s beside it; then issue each agent's credentials with relay creds issue NAME --out FILE.\n", filepath.Join(o.dir, natscreds.Include))
		return nil
	case "list":
		return listCreds(env, o.dir)
	}
	cfg, err := credsConfig(env, o)
	if err != nil {
		return err
	}
	if sub == "issue" {
		if o.out == "" {
			return usagef("relay creds issue %s needs --out FILE", name)
		}
		b, err := natscreds.Issue(o.dir, cfg.Workspace, name)
		if err != nil {
			return err
		}
		if err := writePrivate(o.out, b); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s's credentials (workspace %s) are in %s: RELAY_CREDS=%s RELAY_HUB=nats://… relay wrap --name %s -- …\n",
			name, cfg.Workspace, o.out, o.out, name)
		return nil
	}
	if _, err := natscreds.Revoke(o.dir, cfg.Workspace, name); err != nil {
		return err
	}
	if cfg.Hub.URL == "" {
		fmt.Fprintf(env.Stdout, "%s is revoked in %s and %s; running servers still accept it until they get the account:\n", name,
			filepath.Join(o.dir, natscreds.AccountJWT), filepath.Join(o.dir, natscreds.Include))
		fmt.Fprintf(env.Stdout, "run relay creds revoke %s --hub nats://… again, or restart the servers with the new include.\n", name)
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := natscreds.Push(pctx, o.dir, bus.Options{URL: cfg.Hub.URL, TLSCA: cfg.Hub.TLSCA}); err != nil {
		return fmt.Errorf("%s is revoked in %s, but the servers were not updated: %w", name, o.dir, err)
	}
	fmt.Fprintf(env.Stdout, "%s is revoked: the servers closed its connections and refuse it (and %s says so at a restart).\n",
		name, natscreds.Include)
	if err := markRevoked(pctx, o.dir, cfg, name); err != nil {
		fmt.Fprintf(env.Stderr, "relay: relay agents will not show %s as revoked: %v\n", name, err)
	}
	return nil
}

// markRevoked records in the workspace's presence, with the
// administrator's credentials of dir, that name was revoked (relay agents
// and doctor show it; its wrapper, cut off, cannot).
func markRevoked(ctx context.Context, dir string, cfg *config.Config, name string) error {
	c, err := bus.Connect(ctx, bus.Options{URL: cfg.Hub.URL, TLSCA: cfg.Hub.TLSCA, Workspace: cfg.Workspace,
		Creds: filepath.Join(dir, natscreds.AdminCreds)})
	if err != nil {
		return err
	}
	defer c.Close()
	return c.MarkRevoked(ctx, name)
}

func credsSynopsis(sub string) string {
	switch sub {
	case "init":
		return "[--out DIR]"
	case "issue":
		return "NAME --out FILE [--dir DIR] [--workspace WS]"
	case "revoke":
		return "NAME [--dir DIR] [--workspace WS] [--hub URL] [--tls-ca FILE]"
	}
	return "[--dir DIR]"
}

// parseCredsArgs parses the flags and returns the agent's name, which
// issue and revoke need (before or after the flags).
func parseCredsArgs(fs *flag.FlagSet, sub string, args []string) (string, error) {
	var name string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return "", err
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usagef("unexpected argument %q", rest[0])
	}
	needName := sub == "issue" || sub == "revoke"
	if needName && name == "" {
		return "", usagef("relay creds %s needs the agent's NAME", sub)
	}
	if !needName && name != "" {
		return "", usagef("unexpected argument %q", name)
	}
	if needName {
		if err := bus.ValidName("agent", name); err != nil {
			return "", usagef("%v", err)
		}
	}
	return name, nil
}

// credsConfig resolves the workspace and the servers' URL as other
// commands do (flags, then RELAY_WORKSPACE and RELAY_HUB, the project).
func credsConfig(env *Env, o credsOptions) (*config.Config, error) {
	dir, _ := os.Getwd()
	cfg, err := config.Load(config.Sources{ProjectDir: dir, Env: env.getenv, Flags: config.Flags{Workspace: o.workspace, Hub: o.hub, TLSCA: o.tlsCA}})
	if err != nil {
		var ce config.Errors
		if errors.As(err, &ce) {
			return nil, usagef("configuration: %v", err)
		}
		return nil, err
	}
	if err := bus.ValidName("workspace", cfg.Workspace); err != nil {
		return nil, usagef("%v", err)
	}
	return cfg, nil
}

func listCreds(env *Env, dir string) error {
	users, err := natscreds.Users(dir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tNAME\tISSUED\tSTATE\tKEY")
	for _, u := range users {
		state := "valid"
		if u.Revoked {
			state = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Workspace, u.Name, u.Issued.Format(time.RFC3339), state, u.PublicKey)
	}
	return tw.Flush()
}

// writePrivate writes data to path, readable by its owner only.
func writePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write credentials: %w", err)
	}
	if err := f.Chmod(0o600); err != nil { // an existing file keeps its mode otherwise
		f.Close()
		return fmt.Errorf("write credentials: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write credentials: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write credentials: %w", err)
	}
	return nil
}
