package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGolden reports whether golden files should be rewritten: with the
// package's -update flag when one is defined, else RELAY_UPDATE_GOLDEN=1.
func updateGolden() bool {
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		return true
	}
	return os.Getenv("RELAY_UPDATE_GOLDEN") == "1"
}

// runConfigCLI runs `relay ARGS` with only the given environment and
// returns exit code, stdout and stderr with the testdata folder written as
// TESTDATA.
func runConfigCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }, Environ: []string{}}
	code := Main(args, e)
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	clean := func(s string) string { return strings.ReplaceAll(s, abs, "TESTDATA") }
	return code, clean(stdout.String()), clean(stderr.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with RELAY_UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestConfigGolden(t *testing.T) {
	t.Parallel()
	basic, _ := filepath.Abs("testdata/config-basic")
	bad, _ := filepath.Abs("testdata/config-bad")
	basicEnv := map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(basic, "user"),
		"HOME":            filepath.Join(basic, "home"),
		"RELAY_HUB":       "nats://10.0.0.5:4222",
	}
	tests := []struct {
		golden string
		env    map[string]string
		args   []string
		code   int
	}{
		{"config-show.golden", basicEnv, []string{"config", "show", "--project", filepath.Join(basic, "project", "sub"), "--profile", "claude"}, 0},
		{"config-show-json.golden", basicEnv, []string{"config", "show", "--json", "--project", filepath.Join(basic, "project"), "--profile", "claude"}, 0},
		{"config-check.golden", basicEnv, []string{"config", "check", "--project", filepath.Join(basic, "project")}, 0},
		{"config-check-noproject.golden", map[string]string{"HOME": filepath.Join(basic, "nohome")}, []string{"config", "check", "--project", "/"}, 0},
		{"config-check-bad.golden", map[string]string{"XDG_CONFIG_HOME": filepath.Join(bad, "user")}, []string{"config", "check", "--project", filepath.Join(bad, "project")}, 2},
		{"config-show-bad-env.golden", map[string]string{"RELAY_HUB": "localhost:4222"}, []string{"config", "show", "--project", "/", "--name", "a b"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runConfigCLI(t, tt.env, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			golden(t, tt.golden, stdout+stderr)
		})
	}
}

func TestConfigUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"config"}, {"config", "frob"}, {"config", "check", "extra"}, {"config", "check", "--json"}} {
		if code, _, _ := runConfigCLI(t, nil, args...); code != ExitUsage {
			t.Errorf("relay %s: exit %d, want %d", strings.Join(args, " "), code, ExitUsage)
		}
	}
	if code, out, _ := runConfigCLI(t, nil, "config", "help"); code != 0 || !strings.Contains(out, "check") {
		t.Errorf("relay config help: exit %d, %q", code, out)
	}
}

// TestConfigCheckCommands: relay config check fails (exit 2) on a
// handler's script that is missing or not executable, naming file:line.
func TestConfigCheckCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "[patterns.deploy]\ncommand = [\"./scripts/relay-deploy.sh\"]\n"
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runConfigCLI(t, nil, "config", "check", "--project", dir)
	want := filepath.Join(dir, ".relay", "config.toml") + ":2:1: patterns.deploy.command: " + filepath.Join(dir, "scripts", "relay-deploy.sh") + " does not exist"
	if code != ExitUsage || strings.TrimSpace(stderr) != want {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, want)
	}
}
