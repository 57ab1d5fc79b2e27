package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(config.Sources{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Workspace != "default" || c.Delivery.Mode != config.DeliverBatch || c.Delivery.HumanQuiet != 2*time.Second ||
		c.Damping.MaxHops != config.DefaultMaxHops || len(c.Files) != 0 {
		t.Errorf("defaults: %+v", c)
	}
	if s := c.Source("workspace"); s.Kind != config.FromDefault || s.String() != "default" {
		t.Errorf("source of workspace = %v", s)
	}
	// A fresh value each time: changing one does not change the next.
	c.Workspace = "changed"
	if config.Default().Workspace != "default" {
		t.Error("Default shares state between calls")
	}
}

// TestPrecedence sets every overridable value in every layer and checks
// which wins and that the source says so.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"home/.config/relay/config.toml": "name = 'user'\nworkspace = 'user'\nprofile = 'user'\n[delivery]\nmode = 'steer'\nidle_quiet_ms = 100\nhuman_quiet_ms = 100\n[memory]\nload_at_start = 1\n",
		"repo/.relay/config.toml":        "name = 'project'\nworkspace = 'project'\n[delivery]\nidle_quiet_ms = 200\nhuman_quiet_ms = 200\n",
		"repo/.relay/config.local.toml":  "\n[delivery]\nhuman_quiet_ms = 300\n",
		"repo/sub/dir/.keep":             "",
	})
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "RELAY_WORKSPACE": "env", "RELAY_NAME": "env", "RELAY_HUB": "nats://127.0.0.1:4222"}
	c, err := config.Load(config.Sources{
		ProjectDir: filepath.Join(dir, "repo", "sub", "dir"),
		Env:        func(k string) string { return env[k] },
		Flags:      config.Flags{Name: "flag"},
	})
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(dir, "home/.config/relay/config.toml")
	project := filepath.Join(dir, "repo/.relay/config.toml")
	local := filepath.Join(dir, "repo/.relay/config.local.toml")
	tests := []struct {
		key, value, source string
	}{
		{"name", c.Name, "flag --name"},
		{"workspace", c.Workspace, "env RELAY_WORKSPACE"},
		{"hub.url", c.Hub.URL, "env RELAY_HUB"},
		{"profile", c.Profile, user + ":3"},
		{"delivery.mode", string(c.Delivery.Mode), user + ":5"},
		{"delivery.idle_quiet_ms", c.Delivery.IdleQuiet.String(), project + ":4"},
		{"delivery.human_quiet_ms", c.Delivery.HumanQuiet.String(), local + ":3"},
		{"memory.load_at_start", fmt.Sprint(c.Memory.LoadAtStart), user + ":9"},
		{"damping.max_hops", fmt.Sprint(c.Damping.MaxHops), "default"},
	}
	want := map[string]string{
		"name": "flag", "workspace": "env", "hub.url": "nats://127.0.0.1:4222", "profile": "user", "delivery.mode": "steer",
		"delivery.idle_quiet_ms": "200ms", "delivery.human_quiet_ms": "300ms", "memory.load_at_start": "1", "damping.max_hops": "8",
	}
	for _, tt := range tests {
		if tt.value != want[tt.key] {
			t.Errorf("%s = %q, want %q", tt.key, tt.value, want[tt.key])
		}
		if got := c.Source(tt.key).String(); got != tt.source {
			t.Errorf("source of %s = %s, want %s", tt.key, got, tt.source)
		}
	}
	var files []string
	for _, f := range c.Files {
		files = append(files, fmt.Sprintf("%s %v", f.Scope, f.Found))
	}
	if got := strings.Join(files, ", "); got != "user true, project true, local true" {
		t.Errorf("files: %s", got)
	}
}

// TestMerge: hook lists append in file order (user, project, local);
// patterns merge field by field and keep their first definition's place
// in the order.
func TestMerge(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"user.toml": `
[patterns.notify]
command = "notify-send relay"
[patterns.deploy]
command = ["./deploy.sh"]
timeout = "5m"
[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
command = "echo user"
`,
		"repo/.relay/config.toml": `
[patterns.deploy]
allow = ["alice"]
[patterns.ci]
command = "make ci"
[[hooks.SessionStart]]
matcher = "claude"
[[hooks.SessionStart.hooks]]
command = "echo project"
timeout = 5
`,
		"repo/.relay/config.local.toml": `
[patterns.deploy]
allow = ["alice", "me"]
inject = false
[[hooks.onSessionStart]]
[[hooks.onSessionStart.hooks]]
command = "echo local"
`,
	})
	c, err := config.Load(config.Sources{UserFile: filepath.Join(dir, "user.toml"), ProjectDir: filepath.Join(dir, "repo")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range c.Patterns {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "notify deploy ci" {
		t.Errorf("pattern order: %s", got)
	}
	d, _ := c.Pattern("deploy")
	// The relative program is resolved from the folder of the file that
	// names it (here the user file's).
	if fmt.Sprint(d.Command.Argv, d.Timeout, d.Allow, d.Inject) != "["+filepath.Join(dir, "deploy.sh")+"] 5m0s [alice me] false" {
		t.Errorf("deploy merged to %+v", d)
	}
	if !d.Allowed("me") || d.Allowed("bob") {
		t.Error("Allowed is wrong")
	}
	if got := c.Source("patterns.deploy.timeout").String(); got != filepath.Join(dir, "user.toml")+":6" {
		t.Errorf("timeout source: %s", got)
	}
	if got := c.Source("patterns.deploy.allow").String(); got != filepath.Join(dir, "repo/.relay/config.local.toml")+":3" {
		t.Errorf("allow source: %s", got)
	}
	var cmds []string
	for _, g := range c.Hooks[config.SessionStart] {
		for _, h := range g.Hooks {
			cmds = append(cmds, fmt.Sprintf("%s/%s/%v", g.Matcher, h.Command, h.Timeout))
		}
	}
	if got := strings.Join(cmds, " "); got != "/echo user/1m0s claude/echo project/5s /echo local/1m0s" {
		t.Errorf("merged hooks: %s", got)
	}
	g := c.Hooks[config.SessionStart][1]
	if !g.Matches("claude") || g.Matches("claude-code") || !c.Hooks[config.SessionStart][0].Matches("anything") {
		t.Error("matcher semantics are wrong")
	}
}

func TestMatcherOnOutputSearchesTheLine(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{".relay/config.toml": "[[hooks.Output]]\nmatcher = 'FAIL|panic:'\n[[hooks.Output.hooks]]\ncommand = 'x'\n"})
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Hooks[config.Output][0]
	if !g.Matches("--- FAIL: TestX") || g.Matches("all passed") {
		t.Error("Output matcher should search anywhere in the line")
	}
}

func TestRelativePaths(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"home/relay/token":               "secret",
		"home/.config/relay/config.toml": "[hub]\ntoken_file = '~/relay/token'\ncreds = 'nats.creds'\n",
		"home/.config/relay/nats.creds":  "creds",
		"repo/.relay/config.toml":        "[patterns.deploy]\ncommand = './deploy.sh'\ncwd = 'ops'\n",
		"repo/ops/deploy.sh":             "",
	})
	env := map[string]string{"HOME": filepath.Join(dir, "home")}
	c, err := config.Load(config.Sources{ProjectDir: filepath.Join(dir, "repo", "ops"), Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Pattern("deploy")
	if c.Hub.TokenFile != filepath.Join(dir, "home/relay/token") || c.Hub.Creds != filepath.Join(dir, "home/.config/relay/nats.creds") ||
		p.Cwd != filepath.Join(dir, "repo/ops") {
		t.Errorf("paths: token %s creds %s cwd %s", c.Hub.TokenFile, c.Hub.Creds, p.Cwd)
	}
}

func TestFindProject(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"a/.relay/config.toml": "",
		"a/b/c/.keep":          "",
		"repo/.git/HEAD":       "",
		"repo/x/.keep":         "",
		".relay/config.toml":   "",
	})
	tests := []struct {
		start, root string
		ok          bool
	}{
		{"a/b/c", "a", true},
		{"a", "a", true},
		{"repo/x", "", false}, // the git root stops the search before dir/.relay
		{".", ".", true},
	}
	for _, tt := range tests {
		root, ok := config.FindProject(filepath.Join(dir, tt.start))
		want := ""
		if tt.ok {
			want = filepath.Join(dir, tt.root)
		}
		if ok != tt.ok || root != want {
			t.Errorf("FindProject(%s) = %q, %v; want %q, %v", tt.start, root, ok, want, tt.ok)
		}
	}
}

func TestUserFile(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/home/a"}
	get := func(k string) string { return env[k] }
	if got := config.UserFile(get); got != "/home/a/.config/relay/config.toml" {
		t.Errorf("UserFile = %s", got)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if got := config.UserFile(get); got != "/xdg/relay/config.toml" {
		t.Errorf("UserFile = %s", got)
	}
	if config.UserFile(func(string) string { return "" }) != "" || config.UserFile(nil) != "" {
		t.Error("UserFile without HOME should be empty")
	}
}

func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		// root reads any file; use a folder where a file is expected instead.
		dir := writeTree(t, map[string]string{"cfg/config.toml/x": ""})
		_, err := config.Load(config.Sources{UserFile: filepath.Join(dir, "cfg", "config.toml")})
		if err == nil || !strings.Contains(err.Error(), "read configuration") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	dir := writeTree(t, map[string]string{"config.toml": "name = 'a'"})
	os.Chmod(filepath.Join(dir, "config.toml"), 0)
	if _, err := config.Load(config.Sources{UserFile: filepath.Join(dir, "config.toml")}); err == nil {
		t.Fatal("no error for an unreadable file")
	}
}

// TestTLSCA: hub.tls_ca from a file is relative to the project; from
// RELAY_TLS_CA or --tls-ca, to the working folder; a flag beats the
// variable, which beats the file, and `config show` says which one won.
func TestTLSCA(t *testing.T) {
	files := testutil.TLS(t, "hub.example.test")
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeTree(t, map[string]string{
		"repo/.relay/config.toml": "[hub]\nurl = 'tls://hub.example.test:4222'\ntls_ca = 'certs/team-ca.pem'\n",
		"repo/certs/team-ca.pem":  string(ca),
		"elsewhere/env-ca.pem":    string(ca),
		"elsewhere/flag-ca.pem":   string(ca),
	})
	t.Chdir(filepath.Join(dir, "elsewhere"))
	env := map[string]string{}
	load := func(fl config.Flags) *config.Config {
		t.Helper()
		c, err := config.Load(config.Sources{ProjectDir: filepath.Join(dir, "repo"), Env: func(k string) string { return env[k] }, Flags: fl})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name, env, flag string
		want, source    string
	}{
		{"file", "", "", "repo/certs/team-ca.pem", ".relay/config.toml:3"},
		{"env", "env-ca.pem", "", "elsewhere/env-ca.pem", "env RELAY_TLS_CA"},
		{"flag", "env-ca.pem", "flag-ca.pem", "elsewhere/flag-ca.pem", "flag --tls-ca"},
	} {
		env["RELAY_TLS_CA"] = tc.env
		c := load(config.Flags{TLSCA: tc.flag})
		if c.Hub.TLSCA != filepath.Join(dir, tc.want) || !strings.HasSuffix(c.Source("hub.tls_ca").String(), tc.source) {
			t.Errorf("%s: tls_ca %s from %s, want %s from %s", tc.name, c.Hub.TLSCA, c.Source("hub.tls_ca"), tc.want, tc.source)
		}
	}
	env["RELAY_TLS_CA"] = "missing.pem"
	_, err = config.Load(config.Sources{ProjectDir: filepath.Join(dir, "repo"), Env: func(k string) string { return env[k] }})
	if want := "RELAY_TLS_CA: " + filepath.Join(dir, "elsewhere/missing.pem") + " does not exist"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a missing CA in RELAY_TLS_CA: %v, want %q", err, want)
	}
}

// TestDeliveryModes: every mode name a file may spell, the new default
// "batch" among them.
func TestDeliveryModes(t *testing.T) {
	t.Parallel()
	for spelled, want := range map[string]config.DeliveryMode{
		"batch": config.DeliverBatch, "wait": config.DeliverWait, "queue": config.DeliverQueue,
		"followUp": config.DeliverQueue, "steer": config.DeliverSteer,
	} {
		t.Run(spelled, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"repo/.relay/config.toml": "[delivery]\nmode = '" + spelled + "'\n"})
			c, err := config.Load(config.Sources{ProjectDir: filepath.Join(dir, "repo")})
			if err != nil {
				t.Fatal(err)
			}
			if c.Delivery.Mode != want {
				t.Errorf("mode %q read as %q, want %q", spelled, c.Delivery.Mode, want)
			}
		})
	}
}
