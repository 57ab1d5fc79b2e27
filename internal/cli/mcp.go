//go:build !lean

package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/mcpserver"
)

// mcpSynopsis is relay mcp's help; it names the CLIs relay wrap registers
// the server with, from the registry.
func mcpSynopsis() string {
	return `[--name NAME] [--workspace W] [--hub URL]

An MCP server over stdio: the team's tools (send, agents, inbox, log,
memory_save, memory_search, memory_list, memory_forget, and one per user
namespace of the configuration) for any MCP client. Run by a wrapped
agent's CLI (RELAY_NAME set by relay wrap) it acts as that agent; outside a
wrapper as --name, else $USER. relay wrap registers it by itself with
` + registry.JoinWords(registry.CLIsWhere(func(p agents.Profile) bool { return p.MCP }), "and") +
		`.
See docs/mcp.md to register it by hand.`
}

// mcpIdent is who `relay mcp` acts as.
type mcpIdent struct {
	Name  string
	Agent bool // a wrapped agent (relay wrap set RELAY_NAME), not a person
}

// mcpIdentity says who `relay mcp` acts as: --name when given; else the
// wrapped agent whose CLI runs it (RELAY_NAME, set by relay wrap in the
// agent's environment); else the person ($USER, else human). The hub
// credential comes with the identity through busOptions (RELAY_CREDS,
// RELAY_TOKEN, the state folder's token). This is the one place to change
// when agents get credentials of their own.
func mcpIdentity(env *Env, flagName string) (mcpIdent, error) {
	id := mcpIdent{Name: flagName}
	if id.Name == "" {
		if n := env.getenv("RELAY_NAME"); n != "" {
			id = mcpIdent{Name: n, Agent: true}
		} else {
			id.Name = defaultSender(env)
		}
	}
	if err := bus.ValidName("name", id.Name); err != nil {
		return id, usagef("%v", err)
	}
	return id, nil
}

func runMCP(ctx context.Context, env *Env, args []string) error {
	var hf hubFlags
	var name string
	fs := newFlags(env, "mcp", mcpSynopsis())
	addHubFlags(fs, &hf)
	fs.StringVar(&name, "name", "", "act as `name` (default: the wrapped agent's RELAY_NAME, else $USER, else human)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	id, err := mcpIdentity(env, name)
	if err != nil {
		return err
	}
	// Inside a wrapped agent the hub is reached with the agent's own
	// credential, which sends only as that agent: refuse another name now,
	// not at the first send.
	if agent, err := agentIdentity(env); err != nil {
		return err
	} else if agent != nil && agent.Token != "" && hf.hub == "" && id.Name != agent.Name {
		return usagef("--name %s: inside agent %s, relay mcp acts with %s's own credential and can act only as %s (leave out --name)",
			id.Name, agent.Name, agent.Name, agent.Name)
	}
	cfg, err := loadConfig(env, configOptions{flags: config.Flags{Workspace: hf.workspace, Hub: hf.hub, TLSCA: hf.tlsCA}})
	if err != nil {
		return err
	}
	dir, _ := os.Getwd()
	// stdout is the protocol: diagnostics go to stderr, which MCP clients
	// keep as the server's log.
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcpserver.New(mcpserver.Options{
		Name:       id.Name,
		Agent:      id.Agent,
		Workspace:  cfg.Workspace,
		Damping:    delivery.DamperOptions(cfg.Damping),
		Patterns:   cfg.Patterns,
		HandlerEnv: env.environ(),
		Dir:        dir,
		Version:    Version,
		Logger:     logger,
		Connect: func(ctx context.Context) (mcpserver.Team, error) {
			c, err := connectBus(ctx, env, &hf, id.Name, false)
			if err != nil {
				return mcpserver.Team{}, err
			}
			return mcpserver.Team{Bus: c, Memory: hubdial.Memory(c.Conn())}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("relay mcp: %w", err)
	}
	return srv.Run(ctx, env.Stdin, env.Stdout)
}
