package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

// writeTree creates files (path relative to a fresh folder -> content) and
// returns the folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadErrors loads one bad project file per case and compares the
// whole message, with the temporary folder written as DIR.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, toml, want string
	}{
		{"syntax", "name = ", `DIR/.relay/config.toml:1:7: syntax error: expected value, not end of input`},
		{"bad escape", `name = "a\q"`, `DIR/.relay/config.toml:1:10: syntax error: invalid escape character U+0071 'q'`},
		{"defined twice", "name = 'a'\nname = 'b'", `DIR/.relay/config.toml:2:1: name: defined twice`},
		{"wrong type", "name = 3", `DIR/.relay/config.toml:1:8: name: wrong type: want a string, have an integer`},
		{"wrong type in table", "[delivery]\nmax_body_bytes = \"big\"",
			`DIR/.relay/config.toml:2:18: delivery.max_body_bytes: wrong type: want an integer, have a string`},
		{"wrong type of list", "[patterns.deploy]\ncommand = 'x'\nallow = 'bob'",
			`DIR/.relay/config.toml:3:1: patterns.deploy.allow: wrong type: want a list of strings, have a string`},
		{"table expected", "[patterns]\ndeploy = 3", `DIR/.relay/config.toml:2:1: patterns.deploy: wrong type: want a table ([patterns.deploy]) or a list of tables ([[patterns.deploy]]), have an integer`},
		{"unknown key", "nmae = 'alice'", `DIR/.relay/config.toml:1:1: nmae: unknown key (did you mean "name"?)`},
		{"unknown key far from any", "colour = 'red'", `DIR/.relay/config.toml:1:1: colour: unknown key`},
		{"escapes in a quoted key are shown, not sent", "\"\\u001b[2J\" = 1\n[hub]\n\"\\u001b]0;pwn\\u0007\" = 2",
			"DIR/.relay/config.toml:1:1: \\x1b[2J: unknown key\n" + `DIR/.relay/config.toml:3:1: hub.\x1b]0;pwn\x07: unknown key`},
		{"unknown table", "[delivry]\nmode = 'wait'", `DIR/.relay/config.toml:1:2: delivry: unknown key (did you mean "delivery"?)`},
		{"unknown keys, all of them", "[delivery]\nmdoe = 'wait'\n[damping]\nmax_hop = 3",
			"DIR/.relay/config.toml:2:1: delivery.mdoe: unknown key (did you mean \"mode\"?)\n" +
				`DIR/.relay/config.toml:4:1: damping.max_hop: unknown key (did you mean "max_hops"?)`},
		{"unknown pattern key", "[patterns.deploy]\ncomand = 'x'",
			`DIR/.relay/config.toml:2:1: patterns.deploy.comand: unknown key (did you mean "command"?)`},
		{"unknown hook key", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncommand = 'x'\ntimout = 3",
			`DIR/.relay/config.toml:4:1: hooks.Idle.hooks.timout: unknown key (did you mean "timeout"?)`},
		{"misspelt command is not also missing", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncomand = 'x'\n[patterns.deploy]\ncomand = 'x'",
			"DIR/.relay/config.toml:3:1: hooks.Idle.hooks.comand: unknown key (did you mean \"command\"?)\n" +
				`DIR/.relay/config.toml:5:1: patterns.deploy.comand: unknown key (did you mean "command"?)`},
		{"unknown key and a bad value", "nmae = 'x'\n[delivery]\nmode = 'wiat'",
			"DIR/.relay/config.toml:1:1: nmae: unknown key (did you mean \"name\"?)\n" +
				`DIR/.relay/config.toml:3:1: delivery.mode: "wiat" is not a delivery mode (did you mean "wait"?)`},
		{"unknown event", "[[hooks.SesionStart]]\n[[hooks.SesionStart.hooks]]\ncommand = 'x'",
			`DIR/.relay/config.toml:1:3: hooks.SesionStart: unknown event (did you mean "SessionStart"?)`},
		{"unknown event far from any", "[[hooks.Later]]\n[[hooks.Later.hooks]]\ncommand = 'x'",
			`DIR/.relay/config.toml:1:3: hooks.Later: unknown event (want SessionStart, SessionEnd, Output, Idle, MessageReceived, MessageSent, BeforeToolCall, ToolCall, Blocked)`},
		{"delivery mode", "[delivery]\nmode = 'wiat'", `DIR/.relay/config.toml:2:1: delivery.mode: "wiat" is not a delivery mode (did you mean "wait"?)`},
		{"delivery mode far", "[delivery]\nmode = 'later'", `DIR/.relay/config.toml:2:1: delivery.mode: "later" is not a delivery mode (want batch, wait, queue or steer)`},
		{"negative millis", "[delivery]\nhuman_quiet_ms = -5", `DIR/.relay/config.toml:2:1: delivery.human_quiet_ms: -5 is out of range (want milliseconds from 0 to 86400000)`},
		{"out of range", "[damping]\nmax_hops = 0", `DIR/.relay/config.toml:2:1: damping.max_hops: 0 is out of range (want 1 to 1000)`},
		{"bad duration", "[damping]\npair_window = '5 minutes'",
			`DIR/.relay/config.toml:2:1: damping.pair_window: "5 minutes" is not a duration (want a number with a unit, such as "500ms", "30s" or "2m")`},
		{"bad stuck_after", "[delivery]\nstuck_after = 'half a minute'",
			`DIR/.relay/config.toml:2:1: delivery.stuck_after: "half a minute" is not a duration (want a number with a unit, such as "500ms", "30s" or "2m")`},
		{"negative stuck_after", "[delivery]\nstuck_after = -30", `DIR/.relay/config.toml:2:1: delivery.stuck_after: -30 is not positive`},
		{"negative duration", "[patterns.deploy]\ncommand = 'x'\ntimeout = -3", `DIR/.relay/config.toml:3:1: patterns.deploy.timeout: -3 is not positive`},
		{"float duration", "[patterns.deploy]\ncommand = 'x'\ntimeout = 1.5",
			`DIR/.relay/config.toml:3:1: patterns.deploy.timeout: wrong type: want a duration such as "30s" or a number of seconds, have a float`},
		{"too long", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncommand = 'x'\ntimeout = '25h'", `DIR/.relay/config.toml:4:1: hooks.Idle[0].hooks[0].timeout: 25h is longer than 24h0m0s`},
		{"empty hook command", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ntype = 'command'\ncommand = ''",
			`DIR/.relay/config.toml:4:1: hooks.Idle[0].hooks[0].command: empty command`},
		{"missing hook command", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ntype = 'command'",
			`DIR/.relay/config.toml:2:3: hooks.Idle[0].hooks[0]: missing command`},
		{"hook type", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ntype = 'prompt'\ncommand = 'x'",
			`DIR/.relay/config.toml:3:1: hooks.Idle[0].hooks[0].type: "prompt" hooks are not supported (want "command")`},
		{"group without hooks", "[[hooks.Idle]]\nmatcher = 'x'",
			`DIR/.relay/config.toml:1:3: hooks.Idle[0]: no hooks: add [[hooks.Idle.hooks]] with type = "command" and a command`},
		{"bad matcher", "[[hooks.Output]]\nmatcher = 'err('\n[[hooks.Output.hooks]]\ncommand = 'x'",
			"DIR/.relay/config.toml:2:1: hooks.Output[0].matcher: bad regular expression \"err(\": error parsing regexp: missing closing ): `err(`"},
		{"second group's place", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncommand = 'x'\n\n[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncommand = []",
			`DIR/.relay/config.toml:7:1: hooks.Idle[1].hooks[0].command: empty command`},
		{"argv of other things", "[patterns.deploy]\ncommand = ['deploy', 3]",
			`DIR/.relay/config.toml:2:1: patterns.deploy.command: wrong type: argument 2: want a string, have an integer`},
		{"command of other type", "[patterns.deploy]\ncommand = true",
			`DIR/.relay/config.toml:2:1: patterns.deploy.command: wrong type: want a string (run by sh -c) or a list of strings, have a boolean`},
		{"missing pattern command", "[patterns.deploy]\ntimeout = '5m'",
			`DIR/.relay/config.toml:1:2: patterns.deploy: missing command (a string run by sh -c, or a list of strings)`},
		{"override of a user namespace", "[patterns.deploy]\ncommand = 'x'\noverride = true",
			`DIR/.relay/config.toml:3:1: patterns.deploy.override: override applies to the built-in namespaces (relay, broadcast, memory) only; @deploy: has no built-in handler to replace`},
		{"unknown key in a list of handlers", "[[patterns.deploy]]\ncommand = 'x'\n[[patterns.deploy]]\ncomand = 'y'",
			`DIR/.relay/config.toml:4:1: patterns.deploy[1].comand: unknown key (did you mean "command"?)`},
		{"missing command in the second handler", "[[patterns.deploy]]\ncommand = 'x'\n[[patterns.deploy]]\ntimeout = 5",
			`DIR/.relay/config.toml:3:3: patterns.deploy[1]: missing command (a string run by sh -c, or a list of strings)`},
		{"bad namespace", "[patterns.\"de ploy\"]\ncommand = 'x'",
			`DIR/.relay/config.toml:1:2: patterns.de ploy: "de ploy" is not a namespace name (a letter, then letters, digits, '_' or '-', at most 64)`},
		{"namespace with digit first", "[patterns.9lives]\ncommand = 'x'",
			`DIR/.relay/config.toml:1:2: patterns.9lives: "9lives" is not a namespace name (a letter, then letters, digits, '_' or '-', at most 64)`},
		{"bad allow", "[patterns.deploy]\ncommand = 'x'\nallow = ['bob', 'a.b']", `DIR/.relay/config.toml:3:1: patterns.deploy.allow: "a.b" is not an agent name`},
		{"missing cwd", "[patterns.deploy]\ncommand = 'x'\ncwd = 'scripts'", `DIR/.relay/config.toml:3:1: patterns.deploy.cwd: DIR/scripts does not exist`},
		{"cwd not a folder", "[patterns.deploy]\ncommand = 'x'\ncwd = '.relay/config.toml'",
			`DIR/.relay/config.toml:3:1: patterns.deploy.cwd: DIR/.relay/config.toml is not a folder`},
		{"missing token file", "[hub]\ntoken_file = 'secrets/token'", `DIR/.relay/config.toml:2:1: hub.token_file: DIR/secrets/token does not exist`},
		{"missing creds", "[hub]\ncreds = '/nonexistent/relay.creds'", `DIR/.relay/config.toml:2:1: hub.creds: /nonexistent/relay.creds does not exist`},
		{"creds is a folder", "[hub]\ncreds = '.relay'", `DIR/.relay/config.toml:2:1: hub.creds: DIR/.relay is a folder, not a file`},
		{"missing tls_ca", "[hub]\ntls_ca = 'team-ca.pem'", `DIR/.relay/config.toml:2:1: hub.tls_ca: DIR/team-ca.pem does not exist`},
		{"tls_ca not a certificate", "[hub]\ntls_ca = '.relay/config.toml'",
			`DIR/.relay/config.toml:2:1: hub.tls_ca: DIR/.relay/config.toml holds no PEM certificate (want the CA's, -----BEGIN CERTIFICATE-----)`},
		{"hub scheme", "[hub]\nurl = 'http://example.com'", `DIR/.relay/config.toml:2:1: hub.url: "http://example.com": unknown scheme "http" (want nats, tls, ws or wss)`},
		{"hub not a url", "[hub]\nurl = 'localhost:4222'", `DIR/.relay/config.toml:2:1: hub.url: "localhost:4222" is not a NATS URL (want nats://HOST:PORT)`},
		{"bad name", "name = 'alice smith'",
			`DIR/.relay/config.toml:1:1: name: "alice smith" is not an agent name (letters, digits, '_' and '-', at most 64, starting with a letter or digit)`},
		{"bad workspace", "workspace = 'a.b'",
			`DIR/.relay/config.toml:1:1: workspace: "a.b" is not a workspace name (letters, digits, '_' and '-', at most 64, starting with a letter or digit)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{".relay/config.toml": tt.toml})
			_, err := config.Load(config.Sources{ProjectDir: dir})
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error does not match ErrInvalid: %v", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != filepath.Join(dir, ".relay", "config.toml") || ce.Line == 0 {
				t.Errorf("first error has no file and line: %#v", ce)
			}
			got := strings.ReplaceAll(err.Error(), dir, "DIR")
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestLoadEnvAndFlagErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RELAY_HUB": "localhost", "RELAY_NAME": "ok"}
	_, err := config.Load(config.Sources{Env: func(k string) string { return env[k] }, Flags: config.Flags{Workspace: "a b"}})
	want := "RELAY_HUB: \"localhost\" is not a NATS URL (want nats://HOST:PORT)\n" +
		`--workspace: "a b" is not a workspace name (letters, digits, '_' and '-', at most 64, starting with a letter or digit)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestLoadErrorsEveryFile: mistakes in several files are all reported, in
// reading order.
func TestLoadErrorsEveryFile(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"user/relay/config.toml":     "nme = 'a'",
		"p/.relay/config.toml":       "[delivery]\nmode = 3",
		"p/.relay/config.local.toml": "[damping]\npair_max = 0",
	})
	_, err := config.Load(config.Sources{ProjectDir: filepath.Join(dir, "p"), Env: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(dir, "user")
		}
		return ""
	}})
	want := "user/relay/config.toml:1:1: nme: unknown key (did you mean \"name\"?)\n" +
		"p/.relay/config.toml:2:8: delivery.mode: wrong type: want a string, have an integer\n" +
		"p/.relay/config.local.toml:2:1: damping.pair_max: 0 is out of range (want 1 to 1000000)"
	if err == nil || strings.ReplaceAll(err.Error(), dir+"/", "") != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
