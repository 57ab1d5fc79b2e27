package cli

import (
	"fmt"
	"io"
	"strings"
)

// hubKeys are the configuration keys of every command that talks to a hub.
var hubKeys = []string{"workspace", "hub.url", "hub.token_file", "hub.creds", "hub.tls_ca"}

// configKeys lists the configuration keys (and environment variables) a
// command reads, for its help: what a user may set in .relay/config.toml
// or ~/.config/relay/config.toml to change it.
func configKeys(cmd string) []string {
	switch cmd {
	case "wrap":
		return []string{"name", "workspace", "profile", "hub.url", "hub.token_file", "hub.creds", "hub.tls_ca",
			"delivery.mode", "delivery.idle_quiet_ms", "delivery.human_quiet_ms", "delivery.max_body_bytes",
			"delivery.stuck_after", "damping.pair_window", "damping.pair_max", "damping.agent_window", "damping.agent_max", "damping.max_hops",
			"memory.load_at_start", "patterns.NAME (or [[patterns.NAME]])", "hooks.EVENT"}
	case "send", "agents", "log", "memory":
		return hubKeys
	case "scan":
		return []string{"patterns.NAME (its namespaces)"}
	case "config", "doctor":
		return []string{"every key (see docs/configuration.md)"}
	}
	return nil
}

// envVars lists the environment variables a command reads.
func envVars(cmd string) []string {
	switch cmd {
	case "wrap":
		return []string{"RELAY_HOME", "RELAY_NAME", "RELAY_WORKSPACE", "RELAY_HUB", "RELAY_PROFILE", "RELAY_TOKEN", "RELAY_CREDS", "RELAY_TLS_CA"}
	case "send", "agents", "log", "memory", "doctor":
		return []string{"RELAY_HOME", "RELAY_WORKSPACE", "RELAY_HUB", "RELAY_TOKEN", "RELAY_CREDS", "RELAY_TLS_CA"}
	case "config":
		return []string{"RELAY_NAME", "RELAY_WORKSPACE", "RELAY_HUB", "RELAY_PROFILE", "RELAY_TLS_CA", "XDG_CONFIG_HOME", "HOME"}
	case "creds":
		return []string{"RELAY_HOME", "RELAY_WORKSPACE", "RELAY_HUB", "RELAY_TLS_CA"}
	case "up", "down", "dashboard", "demo", "hook":
		return []string{"RELAY_HOME"}
	}
	return nil
}

// printKeys ends a command's help with the configuration it reads.
func printKeys(w io.Writer, cmd string) {
	if keys := configKeys(cmd); len(keys) > 0 {
		fmt.Fprintf(w, "\nConfiguration keys (.relay/config.toml, ~/.config/relay/config.toml):\n  %s\n", strings.Join(keys, "\n  "))
	}
	if vars := envVars(cmd); len(vars) > 0 {
		fmt.Fprintf(w, "\nEnvironment: %s\n", strings.Join(vars, ", "))
	}
}
