package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestRelayHelperProcess is not a test: relayTestExe's script runs the test
// binary through it as `relay ARGS…` (for the detached hub).
func TestRelayHelperProcess(t *testing.T) {
	if os.Getenv("RELAY_CLI_HELPER") != "1" {
		t.Skip("runs only as the relay binary of the hub tests")
	}
	os.Exit(Main(flag.Args(), System()))
}

// relayTestExe writes a script that runs this test binary as relay.
func relayTestExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "relay")
	script := "#!/bin/sh\nRELAY_CLI_HELPER=1 exec '" + exe + "' -test.run='^TestRelayHelperProcess$' -- \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hubCLI runs relay commands with RELAY_HOME in home and the variables in
// vars, and returns the exit code, stdout and stderr of each.
type hubCLI struct {
	t    *testing.T
	home string
	vars map[string]string
	exe  string
}

func newHubCLI(t *testing.T) *hubCLI {
	home := testutil.Home(t)
	c := &hubCLI{t: t, home: home, exe: relayTestExe(t), vars: map[string]string{
		"RELAY_HOME": home, "HOME": t.TempDir(), "USER": "tester", "PATH": "/usr/bin:/bin",
	}}
	t.Cleanup(func() { _, _ = hub.Stop(context.Background(), home) })
	return c
}

func (c *hubCLI) run(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	var environ []string
	for k, v := range c.vars {
		environ = append(environ, k+"="+v)
	}
	env := &Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return c.vars[k] }, Environ: environ, Executable: c.exe,
	}
	code := Main(args, env)
	return code, out.String(), errb.String()
}

// must runs a command that should succeed and returns its stdout.
func (c *hubCLI) must(args ...string) string {
	c.t.Helper()
	code, out, errs := c.run("", args...)
	if code != 0 {
		c.t.Fatalf("relay %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func TestHubUpSendAgentsLogDown(t *testing.T) {
	c := newHubCLI(t)
	out := c.must("up", "--detach")
	if !strings.HasPrefix(out, "relay hub running on nats://127.0.0.1:") {
		t.Fatalf("up --detach printed %q", out)
	}
	if out := c.must("up", "--detach"); !strings.Contains(out, "already running") {
		t.Errorf("second up --detach printed %q", out)
	}
	ep, err := hub.Discover(c.home)
	if err != nil {
		t.Fatal(err)
	}
	url, token := ep.URL, ep.Token
	ctx := context.Background()
	bob, err := bus.Connect(ctx, bus.Options{URL: url, Token: token, Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if err := bob.Register(ctx); err != nil {
		t.Fatal(err)
	}

	if out := c.must("send", "bob", "please", "run", "the", "tests"); !strings.HasPrefix(out, "sent ") || !strings.Contains(out, " to bob in workspace default") {
		t.Errorf("send printed %q", out)
	}
	code, _, errs := c.run("multi\nline\n", "send", "--from", "ci", "ghost", "-")
	if code != 0 || !strings.Contains(errs, `"ghost" has never joined workspace "default"`) {
		t.Errorf("send to an unknown agent: exit %d, stderr %q; want 0 and a note", code, errs)
	}

	out = c.must("agents")
	if !strings.Contains(out, "NAME") || !regexpLine(out, `^bob\s+-\s+starting\s+\S+ ago\s+\S+ ago\s+1\s+-$`) {
		t.Errorf("agents printed:\n%s", out)
	}
	var p bus.Presence
	if err := json.Unmarshal([]byte(c.must("agents", "--json")), &p); err != nil || p.Name != "bob" || p.Pending != 1 {
		t.Errorf("agents --json: %+v, %v", p, err)
	}

	out = c.must("log")
	if !regexpLine(out, `tester -> bob  \[bob:queued\]  please run the tests$`) ||
		!regexpLine(out, `ci -> ghost  \[ghost:queued\]  multi\\nline$`) {
		t.Errorf("log printed:\n%s", out)
	}
	if out := c.must("log", "-n", "1"); strings.Count(out, "\n") != 1 || !strings.Contains(out, "ci -> ghost") {
		t.Errorf("log -n 1 printed:\n%s", out)
	}
	if out := c.must("log", "--since", "1h"); strings.Count(out, "\n") != 2 {
		t.Errorf("log --since 1h printed:\n%s", out)
	}
	if code, out, errs := c.run("", "log", "--since", "2099-01-01"); code != 0 || out != "" || !strings.Contains(errs, "no messages") {
		t.Errorf("log --since 2099-01-01: exit %d, %q, %q", code, out, errs)
	}
	var e bus.Entry
	if err := json.Unmarshal([]byte(c.must("log", "--json", "--agent", "ghost")), &e); err != nil || e.Body != "multi\nline" {
		t.Errorf("log --json --agent ghost: %+v, %v", e, err)
	}

	if out := c.must("down"); !strings.Contains(out, "stopped") {
		t.Errorf("down printed %q", out)
	}
	if out := c.must("down"); !strings.Contains(out, "no hub running") {
		t.Errorf("second down printed %q", out)
	}
	code, _, errs = c.run("", "send", "bob", "hello")
	if code != 1 || !strings.Contains(errs, "relay up --detach") {
		t.Errorf("send without a hub: exit %d, stderr %q; want 1 and how to start one", code, errs)
	}
}

func regexpLine(text, pattern string) bool {
	return regexpMust(`(?m)` + pattern).MatchString(text)
}

func TestHubExternalServer(t *testing.T) {
	h, err := hub.Start(context.Background(), hub.Options{Home: testutil.Home(t), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	c := newHubCLI(t)
	c.vars["RELAY_TOKEN"] = h.Token()
	c.vars["RELAY_WORKSPACE"] = "team"
	code, _, errs := c.run("", "send", "--hub", h.URL(), "--from", "ci", "*", "hi")
	if code != 1 || !strings.Contains(errs, `no other agents in the workspace "team"`) {
		t.Errorf("broadcast to nobody: exit %d, stderr %q", code, errs)
	}
	code, _, errs = c.run("", "send", "--hub", h.URL(), "bob", "hi")
	if code != 0 || !strings.Contains(errs, `workspace "team"`) {
		t.Errorf("send through --hub: exit %d, %q", code, errs)
	}
	c.vars["RELAY_HUB"] = h.URL()
	delete(c.vars, "RELAY_TOKEN")
	code, _, errs = c.run("", "agents")
	if code != 1 || !strings.Contains(strings.ToLower(errs), "authorization") {
		t.Errorf("agents without the token: exit %d, stderr %q; want 1 and an authorization error", code, errs)
	}
	if _, err := hub.Discover(c.home); err == nil {
		t.Error("an external hub started a local one")
	}
}

func TestHubUsageErrors(t *testing.T) {
	c := newHubCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"send"}, "want a target and a message"},
		{[]string{"send", "bob.x", "hi"}, `target name "bob.x"`},
		{[]string{"send", "--from", "a b", "bob", "hi"}, "--from"},
		{[]string{"send", "bob", strings.Repeat("x", bus.MaxBody+1)}, "the limit is 65536"},
		{[]string{"up", "--listen", "0.0.0.0:4222"}, "not loopback"},
		{[]string{"up", "--tls-cert", "c.pem"}, "go together"},
		{[]string{"agents", "extra"}, "unexpected argument"},
		{[]string{"log", "--workspace", "a.b"}, `"a.b" is not a workspace name`},
		{[]string{"log", "--since", "yesterday"}, `--since: "yesterday" is neither a duration`},
		{[]string{"log", "--since", "-5m"}, "want a positive duration"},
		{[]string{"log", "-n", "-1"}, "want a number of messages"},
	} {
		code, _, errs := c.run("", tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("relay %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}

func regexpMust(p string) *regexp.Regexp { return regexp.MustCompile(p) }

// startRelay runs the relay stand-in (this test binary) as a process with
// c's variables, its stdout in out.
func (c *hubCLI) startRelay(out io.Writer, args ...string) *exec.Cmd {
	c.t.Helper()
	cmd := exec.Command(c.exe, args...)
	for k, v := range c.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func waitOutput(t *testing.T, out *testutil.Buffer, want string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		if !strings.Contains(out.String(), want) {
			return testutil.Errorf("output lacks %q:\n%s", want, out.String())
		}
		return nil
	})
}

func TestHubForegroundAndLogFollow(t *testing.T) {
	c := newHubCLI(t)
	var hubOut testutil.Buffer
	up := c.startRelay(&hubOut, "up")
	waitOutput(t, &hubOut, "relay hub listening on nats://127.0.0.1:")
	if _, err := hub.Discover(c.home); err != nil {
		t.Fatalf("foreground hub not found: %v", err)
	}
	c.must("send", "--from", "ci", "bob", "first")

	var logOut testutil.Buffer
	follow := c.startRelay(&logOut, "log", "--follow")
	waitOutput(t, &logOut, "ci -> bob  [bob:queued]  first")
	c.must("send", "--from", "ci", "bob", "second")
	waitOutput(t, &logOut, "ci -> bob  [bob:queued]  second")
	if err := follow.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := follow.Wait(); err != nil {
		t.Errorf("log --follow after Ctrl-C: %v\n%s", err, logOut.String())
	}

	if err := up.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := up.Wait(); err != nil {
		t.Errorf("up after SIGTERM: %v\n%s", err, hubOut.String())
	}
	if !strings.Contains(hubOut.String(), "relay hub stopped") {
		t.Errorf("up printed %q", hubOut.String())
	}
	if _, err := hub.Discover(c.home); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Discover after the foreground hub stopped: %v", err)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 3, 18, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"90m", now.Add(-90 * time.Minute)},
		{"2h", now.Add(-2 * time.Hour)},
		{"2026-12-03T15:04:05Z", time.Date(2026, 12, 3, 15, 4, 5, 0, time.UTC)},
		{"2026-12-03 15:04", time.Date(2026, 12, 3, 15, 4, 0, 0, time.Local)},
		{"2026-12-03 15:04:05", time.Date(2026, 12, 3, 15, 4, 5, 0, time.Local)},
		{"2026-12-03", time.Date(2026, 12, 3, 0, 0, 0, 0, time.Local)},
	} {
		got, err := parseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "512K": 512 << 10, "64M": 64 << 20, "2G": 2 << 30, "2GiB": 2 << 30, "1gb": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1", "0", "1.5G", "lots"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) gave no error", in)
		}
	}
}

// A wrapper that finds a hub `relay up` is starting, and saves a memory at
// once, finds the memory service: hub.json names the hub only once the
// service is live. Three starts in a row, each saving the moment the
// record appears.
func TestUpRecordsTheHubWithItsMemoryLive(t *testing.T) {
	c := newHubCLI(t)
	for i := range 3 {
		var hubOut testutil.Buffer
		up := c.startRelay(&hubOut, "up", "--dashboard", "off")
		var ep hub.Endpoint
		testutil.Eventually(t, func() error {
			var err error
			ep, err = hub.Find(c.home)
			return err
		})
		nc, err := bus.Dial(context.Background(), bus.Options{URL: ep.URL, Token: ep.Token}, "test")
		if err != nil {
			t.Fatal(err)
		}
		api := memory.NewClient(nc, memory.DefaultSubjectPrefix)
		text := fmt.Sprintf("start %d: the staging database is read-only", i)
		if reply, err := memory.Handle(context.Background(), api, "alice", "default", "save", text); err != nil {
			t.Fatalf("start %d: @memory:save the moment the hub was recorded: %q, %v", i, reply, err)
		}
		nc.Close()
		_ = up.Process.Signal(syscall.SIGTERM)
		_ = up.Wait()
		if !strings.Contains(hubOut.String(), "relay hub stopped") {
			t.Fatalf("start %d: the hub did not stop cleanly:\n%s", i, hubOut.String())
		}
	}
}
