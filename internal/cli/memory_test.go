package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// memCLI runs `relay memory …` in-process with RELAY_HOME in a temporary
// folder and no hub.
type memCLI struct {
	t    *testing.T
	home string
	vars map[string]string
}

func newMemCLI(t *testing.T) *memCLI {
	home := testutil.Home(t)
	return &memCLI{t: t, home: home, vars: map[string]string{"RELAY_HOME": home, "HOME": t.TempDir(), "USER": "tester"}}
}

func (c *memCLI) run(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }, Environ: []string{}}
	code := Main(append([]string{"memory"}, args...), env)
	return code, out.String(), errb.String()
}

func (c *memCLI) must(stdin string, args ...string) (string, string) {
	c.t.Helper()
	code, out, errs := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("relay memory %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out, errs
}

var memIDRe = regexp.MustCompile(`\[([0-9a-z]{8})\]`)

func TestMemoryCLIWithoutHub(t *testing.T) {
	c := newMemCLI(t)
	out, errs := c.must("", "save", "Deploys", "need", "the", "VPN", "#ops")
	path := filepath.Join(c.home, "memory.db")
	if errs != "relay: no hub running; using "+path+" directly\n" {
		t.Errorf("stderr = %q, want the no-hub notice naming %s", errs, path)
	}
	if !strings.HasPrefix(out, "memory saved as [") {
		t.Fatalf("save printed %q", out)
	}
	id := memIDRe.FindStringSubmatch(out)[1]
	if out, _ := c.must("", "save", "--tags", "db,Infra", "--scope", "global", "The", "staging", "DB", "resets", "nightly"); !strings.HasPrefix(out, "memory saved as") {
		t.Fatalf("second save printed %q", out)
	}
	if out, _ := c.must("", "save", "deploys need the vpn"); out != "memory already saved as ["+id+"]; marked recent\n" {
		t.Errorf("duplicate save printed %q", out)
	}

	out, _ = c.must("", "search", "deploying", "--limit", "5")
	if want := "- [" + id + "] Deploys need the VPN (now, tester) #ops\n"; out != want {
		t.Errorf("search printed %q, want %q", out, want)
	}
	out, _ = c.must("", "list", "--tags", "infra")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "The staging DB resets nightly (now, tester, global) #db #infra") {
		t.Errorf("list --tags printed %q", out)
	}
	if out, _ := c.must("", "get", strings.ToUpper(id)); !strings.Contains(out, "Deploys need the VPN") {
		t.Errorf("get printed %q", out)
	}

	export, _ := c.must("", "export")
	if strings.Count(export, "\n") != 2 || !strings.Contains(export, `"id":"`+id+`"`) {
		t.Fatalf("export printed %q", export)
	}
	out, _ = c.must("", "forget", id)
	if out != "memory forgot ["+id+"] Deploys need the VPN\n" {
		t.Errorf("forget printed %q", out)
	}
	code, _, errs := c.run("", "forget", id)
	if code != 1 || !strings.Contains(errs, "memory not found: no memory has id "+id) {
		t.Errorf("forget twice: exit %d, stderr %q", code, errs)
	}

	// Import into a new home from a file and from stdin.
	file := filepath.Join(t.TempDir(), "backup.jsonl")
	os.WriteFile(file, []byte(export), 0o600)
	other := newMemCLI(t)
	if out, _ := other.must("", "import", file); out != "imported 2 memories from "+file+" (0 already there)\n" {
		t.Errorf("import printed %q", out)
	}
	if out, _ := other.must(export, "import", "--json"); out != "{\n  \"added\": 0,\n  \"skipped\": 2\n}\n" {
		t.Errorf("import again printed %q", out)
	}
	if out, _ := other.must("", "get", id); !strings.Contains(out, "Deploys need the VPN") {
		t.Errorf("imported memory kept no id: %q", out)
	}
	code, _, errs = other.run("{\"text\":\"ok\"}\nnot json\n", "import", "-")
	if code != 1 || !strings.Contains(errs, "stdin: import memories: line 2:") {
		t.Errorf("bad import: exit %d, stderr %q", code, errs)
	}
}

func TestMemoryCLIJSON(t *testing.T) {
	c := newMemCLI(t)
	save, _ := c.must("", "save", "--json", "--as", "Alice", "Use pnpm, not npm #build")
	c.must("", "save", "--workspace", "web", "--tags", "js", "Run", "pnpm", "install", "after", "pulling")
	search, _ := c.must("", "search", "--json", "pnpm")
	list, _ := c.must("", "list", "--json", "--workspace", "web")
	empty, _ := c.must("", "search", "--json", "nothing-like-this")
	got := strings.Join([]string{"$ relay memory save --json --as Alice 'Use pnpm, not npm #build'", save,
		"$ relay memory search --json pnpm", search,
		"$ relay memory list --json --workspace web", list,
		"$ relay memory search --json nothing-like-this", empty}, "\n")
	got = regexp.MustCompile(`"id": "[0-9a-z]{8}"`).ReplaceAllString(got, `"id": "ID"`)
	got = regexp.MustCompile(`"(created|updated)": "[^"]+"`).ReplaceAllString(got, `"$1": "TIME"`)
	got = regexp.MustCompile(`"score": [0-9.e+-]+`).ReplaceAllString(got, `"score": SCORE`)
	golden(t, "memory-json.golden", got)
}

func TestMemoryCLIUsage(t *testing.T) {
	c := newMemCLI(t)
	for _, args := range [][]string{
		{}, {"fly"}, {"save"}, {"search"}, {"forget"}, {"forget", "a", "b"}, {"list", "x"},
		{"save", "--scope", "team", "x"}, {"save", "--nope", "x"}, {"save", "  "},
	} {
		code, _, errs := c.run("", args...)
		if code != 2 || errs == "" {
			t.Errorf("relay memory %q: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
}

// TestMemoryCLIThroughHub points the CLI at a NATS server that serves
// memory: it uses the service, not the file, and prints no notice.
func TestMemoryCLIThroughHub(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	defer ns.Shutdown()
	st, err := memory.Open(filepath.Join(t.TempDir(), "hub-memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- memory.Serve(ctx, nc, memory.DefaultSubjectPrefix, st) }()
	defer func() { cancel(); <-served }()

	// The service answers before the CLI first asks: a CLI that finds no
	// memory service falls back to its file, which is another test.
	testutil.Eventually(t, func() error {
		_, err := nc.Request(memory.DefaultSubjectPrefix+".list", []byte("{}"), time.Second)
		return err
	})
	c := newMemCLI(t)
	c.vars["RELAY_HUB"] = ns.ClientURL()
	testutil.Eventually(t, func() error {
		code, _, errs := c.run("", "list")
		if code != 0 || errs != "" {
			return testutil.Errorf("list: exit %d, stderr %q", code, errs)
		}
		return nil
	})
	out, errs := c.must("", "save", "served", "by", "the", "hub")
	if errs != "" || !strings.HasPrefix(out, "memory saved as") {
		t.Fatalf("save through the hub: %q, stderr %q", out, errs)
	}
	if res, _ := st.Search(context.Background(), memory.Query{Text: "served hub"}); len(res) != 1 || res[0].Workspace != "default" || res[0].Author != "tester" {
		t.Fatalf("the hub's store holds %+v", res)
	}
	if _, err := os.Stat(filepath.Join(c.home, "memory.db")); err == nil {
		t.Error("the CLI opened the local file although the hub served memory")
	}
}

// TestMemoryCLIHubWithoutMemory: a hub that does not serve memory makes
// the CLI fall back to the file, saying why.
func TestMemoryCLIHubWithoutMemory(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats not ready")
	}
	defer ns.Shutdown()
	c := newMemCLI(t)
	c.vars["RELAY_HUB"] = ns.ClientURL()
	_, errs := c.must("", "list")
	if want := "relay: the hub serves no memory; using " + filepath.Join(c.home, "memory.db") + " directly\n"; errs != want {
		t.Errorf("stderr = %q, want %q", errs, want)
	}
}
