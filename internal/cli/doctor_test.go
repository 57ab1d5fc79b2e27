package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/memory"
)

// fakeBin writes an executable shell script called name into dir.
func fakeBin(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// privateDir is a new temporary folder with mode 0700, as relay makes
// its state folder.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// doctorEnv is an Env whose PATH is only bin, with vars on top.
func doctorEnv(bin string, vars map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	all := map[string]string{"PATH": bin, "HOME": filepath.Join(bin, "nohome"), "XDG_CONFIG_HOME": filepath.Join(bin, "noconfig")}
	for k, v := range vars {
		all[k] = v
	}
	var environ []string
	for k, v := range all {
		environ = append(environ, k+"="+v)
	}
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return all[k] }, Environ: environ}, &out, &errb
}

// doctorMemory runs the memory service on the hub at url, as relay up does.
func doctorMemory(t *testing.T, url, token string) {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.Token(token))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { memory.Serve(ctx, nc, memory.DefaultSubjectPrefix, st); close(done) }()
	t.Cleanup(func() { cancel(); <-done; nc.Close(); st.Close() })
}

// TestDoctorHealthy: a private state folder with a hub that serves memory,
// and Claude Code, Codex and Gemini CLI on PATH with relay beside them: every line is
// ok, the CLIs' versions and profiles are reported, and the exit status is 0.
func TestDoctorHealthy(t *testing.T) {
	home := privateDir(t)
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	doctorMemory(t, h.URL(), h.Token())
	bin := t.TempDir()
	fakeBin(t, bin, "claude", `echo "2.1.0 (Claude Code)"`)
	fakeBin(t, bin, "codex", `echo "codex-cli 0.169.0"`)
	fakeBin(t, bin, "gemini", `case "$1" in --help) echo "  --session-id  Start a session with this id";; *) echo "0.61.0";; esac`)
	fakeBin(t, bin, "relay", `exit 0`)
	env, out, errb := doctorEnv(bin, map[string]string{"RELAY_HOME": home})

	if code := Main([]string{"doctor", "--json"}, env); code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errb)
	}
	var rep doctorReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if !rep.OK {
		t.Errorf("report not ok:\n%s", out)
	}
	checks := map[string]doctorCheck{}
	for _, c := range rep.Checks {
		checks[c.Name] = c
		if !c.OK {
			t.Errorf("%s: %s (fix: %s)", c.Name, c.Detail, c.Fix)
		}
	}
	for _, name := range []string{"state folder", "config", "hub", "memory"} {
		if _, ok := checks[name]; !ok {
			t.Errorf("no %s check in %s", name, out)
		}
	}
	if !strings.Contains(checks["hub"].Detail, h.URL()) {
		t.Errorf("hub check does not name %s: %q", h.URL(), checks["hub"].Detail)
	}
	want := map[string]struct{ version, profile, exact, state string }{
		"claude": {"2.1.0 (Claude Code)", "claude", "hooks (relay hook, via " + filepath.Join(bin, "relay"), "hooks"},
		"codex":  {"codex-cli 0.169.0", "codex", "rollout file (" + filepath.Join(bin, "nohome", ".codex", "sessions"), "OSC 7501"},
		"gemini": {"0.61.0", "gemini", "chat transcript (" + filepath.Join(bin, "nohome", ".gemini"), `window title says "Ready"`},
	}
	if len(rep.Agents) != len(want) {
		t.Fatalf("agents %+v, want claude, codex and gemini", rep.Agents)
	}
	for _, a := range rep.Agents {
		w := want[a.Command]
		if a.Version != w.version || a.Profile != w.profile || !strings.HasPrefix(a.ExactText, w.exact) || !strings.Contains(a.State, w.state) || !a.OK {
			t.Errorf("%s: got %+v, want %+v", a.Command, a, w)
		}
		if a.Command == "gemini" {
			// Gemini CLI skips relay's overlay below /tmp (the state
			// folder here): doctor says so instead of "registered".
			if !strings.HasPrefix(a.MCP, "missing:") || !strings.Contains(a.MCP, "skipped by Gemini CLI as insecure") {
				t.Errorf("%s: mcp tools %q, want missing, skipped by Gemini CLI", a.Command, a.MCP)
			}
			continue
		}
		if !strings.HasPrefix(a.MCP, "registered for each session") {
			t.Errorf("%s: mcp tools %q, want registered", a.Command, a.MCP)
		}
	}
	// Every other CLI of the registry is not on PATH.
	if nf := strings.Join(rep.NotFound, ","); !strings.Contains(nf, "aider") || strings.Contains(nf, "claude") {
		t.Errorf("not found: %v, want aider and no claude", rep.NotFound)
	}
}

// TestDoctorProblems: each broken thing is named, with a line that says how
// to fix it, and the exit status is 1.
func TestDoctorProblems(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, home, bin string) map[string]string
		want  []string // in the text report
	}{
		{
			name: "no hub, open state folder",
			setup: func(t *testing.T, home, bin string) map[string]string {
				if err := os.Chmod(home, 0o755); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			want: []string{"FAIL  state folder", "has mode 0755", "fix: chmod 700 ", "FAIL  hub", "no hub running", "fix: start one with `relay up --detach`", "--    memory       not checked: no hub"},
		},
		{
			name: "missing state folder",
			setup: func(t *testing.T, home, bin string) map[string]string {
				return map[string]string{"RELAY_HOME": filepath.Join(home, "absent")}
			},
			want: []string{"FAIL  state folder", "does not exist", "fix: run `relay up --detach` (it creates it)"},
		},
		{
			name: "external hub that does not answer",
			setup: func(t *testing.T, home, bin string) map[string]string {
				return map[string]string{"RELAY_HUB": "nats://127.0.0.1:1", "RELAY_HOME": filepath.Join(home, "absent")}
			},
			want: []string{"FAIL  hub", "nats://127.0.0.1:1 does not answer", "fix: restart it", "--    memory"},
		},
		{
			name: "hub without memory",
			setup: func(t *testing.T, home, bin string) map[string]string {
				hubtest.StartAt(t, home, "127.0.0.1:0")
				return nil
			},
			want: []string{"ok    hub", "FAIL  memory", "no memory service answers", "fix: the hub of `relay up` serves it"},
		},
		{
			name: "claude without relay on PATH, codex that fails",
			setup: func(t *testing.T, home, bin string) map[string]string {
				fakeBin(t, bin, "claude", `echo "2.1.0 (Claude Code)"`)
				fakeBin(t, bin, "codex", `echo "error: cannot load config" >&2; exit 3`)
				return nil
			},
			want: []string{"FAIL  claude", "relay is not on PATH", "fix: put the relay binary on PATH",
				"FAIL  codex", "--version failed", "cannot load config", "fix: check that it runs"},
		},
		{
			name: "bad configuration",
			setup: func(t *testing.T, home, bin string) map[string]string {
				dir := filepath.Join(bin, "cfg", "relay")
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("no_such_key = 1\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"XDG_CONFIG_HOME": filepath.Join(bin, "cfg")}
			},
			want: []string{"FAIL  config", "config.toml", "fix: correct the files named above"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, bin := privateDir(t), t.TempDir()
			vars := map[string]string{"RELAY_HOME": home}
			for k, v := range c.setup(t, home, bin) {
				vars[k] = v
			}
			env, out, errb := doctorEnv(bin, vars)
			if code := Main([]string{"doctor"}, env); code != ExitFailure {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errb)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(out.String(), "something is broken") {
				t.Errorf("no verdict:\n%s", out)
			}
		})
	}
}

// TestDoctorOldClaude: a Claude Code older than 2.0 is read off the
// screen, as relay wrap does; doctor says so and how to get the exact path.
func TestDoctorOldClaude(t *testing.T) {
	bin := t.TempDir()
	fakeBin(t, bin, "claude", `echo "1.0.128 (Claude Code)"`)
	fakeBin(t, bin, "relay", `exit 0`)
	env, out, errb := doctorEnv(bin, map[string]string{"RELAY_HOME": privateDir(t)})
	Main([]string{"doctor", "--json"}, env)
	var rep doctorReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errb)
	}
	if len(rep.Agents) != 1 || !strings.Contains(rep.Agents[0].ExactText, "screen (Claude Code 1.0.128 is older than 2.0") ||
		!strings.HasPrefix(rep.Agents[0].State, "screen") {
		t.Errorf("agents: %+v", rep.Agents)
	}
}

// TestDoctorUsage: doctor takes no arguments.
func TestDoctorUsage(t *testing.T) {
	env, out, errb := doctorEnv(t.TempDir(), nil)
	if code := Main([]string{"doctor", "extra"}, env); code != ExitUsage {
		t.Errorf("exit %d, want 2\nstdout: %s\nstderr: %s", code, out, errb)
	}
}

// TestDoctorExactSources: a Gemini CLI without --session-id, and a
// CODEX_HOME that is not a folder, are read off the screen, and doctor
// says why.
func TestDoctorExactSources(t *testing.T) {
	bin := t.TempDir()
	fakeBin(t, bin, "codex", `echo "codex-cli 0.169.0"`)
	fakeBin(t, bin, "gemini", `echo "0.20.0"`)
	notDir := filepath.Join(t.TempDir(), "codex-home")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env, out, _ := doctorEnv(bin, map[string]string{"RELAY_HOME": privateDir(t), "CODEX_HOME": notDir})
	Main([]string{"doctor", "--json"}, env)
	var rep doctorReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	want := map[string]string{
		"codex":  "screen (" + notDir + " is not a folder",
		"gemini": "screen (this Gemini CLI has no --session-id",
	}
	for _, a := range rep.Agents {
		if w, ok := want[a.Command]; ok && !strings.HasPrefix(a.ExactText, w) {
			t.Errorf("%s: exact text %q, want it to start %q", a.Command, a.ExactText, w)
		}
	}
}
