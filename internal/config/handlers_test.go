package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

// TestSeveralHandlers loads [[patterns.NAME]] lists, the single-table form
// beside them, and an override of a built-in namespace.
func TestSeveralHandlers(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		".relay/config.toml": `
[[patterns.deploy]]
command = ["./scripts/check.sh"]

[[patterns.deploy]]
command = "echo second"
timeout = "5s"

[patterns.notify]
command = "echo one"

[[patterns.memory]]
command = ["./scripts/my-memory"]
override = true
`,
		".relay/config.local.toml": "[patterns.deploy]\ntimeout = \"9s\"\n",
		"user/config.toml":         "[[patterns.deploy]]\ncommand = 'echo zero'\n",
	})
	if err := os.MkdirAll(filepath.Join(dir, "sub", "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{UserFile: filepath.Join(dir, "user", "config.toml"), ProjectDir: filepath.Join(dir, "sub", "folder")})
	if err != nil {
		t.Fatal(err)
	}
	deploy := c.Handlers("deploy")
	if len(deploy) != 3 || deploy[0].Command.Shell != "echo zero" {
		t.Fatalf("deploy handlers %+v, want the user file's then the project's two", deploy)
	}
	deploy = deploy[1:]
	if want := filepath.Join(dir, "scripts", "check.sh"); deploy[0].Command.Argv[0] != want {
		t.Errorf("relative command resolved to %q, want %q (from the project root)", deploy[0].Command.Argv[0], want)
	}
	if first := c.Handlers("deploy")[0]; first.Timeout.String() != "9s" || deploy[1].Timeout.String() != "5s" {
		t.Errorf("timeouts %v %v: the local single table must merge into the namespace's first handler", first.Timeout, deploy[1].Timeout)
	}
	if deploy[1].Command.Shell != "echo second" {
		t.Errorf("handlers out of order: %+v", deploy)
	}
	if deploy[1].Key != "patterns.deploy[2]" || c.Source("patterns.deploy[2].timeout").Line != 7 {
		t.Errorf("second handler key %q, timeout from %v", deploy[1].Key, c.Source("patterns.deploy[1].timeout"))
	}
	if m := c.Handlers("memory"); len(m) != 1 || !m[0].Override {
		t.Errorf("memory handlers %+v, want one override", m)
	}
	if n := c.Handlers("notify"); len(n) != 1 {
		t.Errorf("notify handlers %+v", n)
	}
}

// TestCheckCommands reports a missing and a non-executable program with
// the file and line that name it, and accepts an executable one.
func TestCheckCommands(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		".relay/config.toml": `[patterns.deploy]
command = ["./scripts/deploy.sh"]

[patterns.notify]
command = ["./scripts/notify.sh"]

[patterns.ok]
command = ["./scripts/ok.sh"]

[[hooks.Idle]]
hooks = [{ type = "command", command = ["./scripts/idle.sh"] }]
`,
		"scripts/notify.sh": "#!/bin/sh\n",
		"scripts/ok.sh":     "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(dir, "scripts", "ok.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(c.CheckCommands().Error(), dir, "DIR")
	want := strings.Join([]string{
		"DIR/.relay/config.toml:2:1: patterns.deploy.command: DIR/scripts/deploy.sh does not exist",
		"DIR/.relay/config.toml:5:1: patterns.notify.command: DIR/scripts/notify.sh is not executable (chmod +x DIR/scripts/notify.sh)",
		"DIR/.relay/config.toml:11:30: hooks.Idle[0].hooks[0].command: DIR/scripts/idle.sh does not exist",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
