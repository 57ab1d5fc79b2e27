package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/identity"
)

// insideAgent is a hub, agent Alice running on it (her wrapper answers
// control requests and would stop), and the environment of a command run
// inside agent Bob: his identity file with his own credential.
type insideAgent struct {
	h    *hub.Hub
	vars map[string]string
	// stopped counts the stop requests Alice's wrapper took.
	stopped chan bus.Control
}

func newInsideAgent(t *testing.T) *insideAgent {
	t.Helper()
	home := privateDir(t)
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	alice, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alice.Close() })
	ia := &insideAgent{h: h, stopped: make(chan bus.Control, 4)}
	go alice.ServeControl(ctx, func(c bus.Control) bus.ControlReply {
		ia.stopped <- c
		return bus.ControlReply{OK: true}
	})
	cred, err := h.Issue(bus.DefaultWorkspace, "Bob")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(privateDir(t), "Bob.json")
	if err := identity.Write(file, identity.File{Name: "Bob", Workspace: bus.DefaultWorkspace, Hub: h.URL(),
		Token: cred.Token, InboxPrefix: cred.InboxPrefix}); err != nil {
		t.Fatal(err)
	}
	ia.vars = map[string]string{"RELAY_HOME": home, "HOME": t.TempDir(), "USER": "tester", "PATH": "/usr/bin:/bin",
		"RELAY_NAME": "Bob", identity.FileEnv: file}
	return ia
}

// run runs a relay command with the agent's environment and stdin.
func (ia *insideAgent) run(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	var environ []string
	for k, v := range ia.vars {
		environ = append(environ, k+"="+v)
	}
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return ia.vars[k] }, Environ: environ}
	code = Main(args, env)
	return code, out.String(), errb.String()
}

// TestStopRefusedInsideAgent: relay stop Alice run inside agent Bob acts
// with Bob's credential, which may not stop agents: it says so at once,
// not after 10 s that Alice is not running (she is).
func TestStopRefusedInsideAgent(t *testing.T) {
	ia := newInsideAgent(t)
	start := time.Now()
	code, out, errs := ia.run("", "stop", "Alice")
	took := time.Since(start)
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitFailure, out, errs)
	}
	if !strings.Contains(errs, "refused") || !strings.Contains(errs, "Bob's own credential") || strings.Contains(errs, "not running") {
		t.Errorf("stderr %q; want the refusal, not 'not running'", errs)
	}
	if took > 5*time.Second {
		t.Errorf("the refusal took %v; want it at once", took)
	}
	select {
	case c := <-ia.stopped:
		t.Errorf("Alice's wrapper took a stop request: %+v", c)
	default:
	}
}

// TestMCPNameRefusedInsideAgent: relay mcp --name Impostor inside agent
// Bob is refused at once (exit 2, before any handshake), since Bob's
// credential can only act as Bob; --name Bob and no --name still serve.
func TestMCPNameRefusedInsideAgent(t *testing.T) {
	ia := newInsideAgent(t)
	code, out, errs := ia.run(handshakeLines, "mcp", "--name", "Impostor")
	if code != ExitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q; want exit %d and no handshake\nstderr: %s", code, out, ExitUsage, errs)
	}
	if !strings.Contains(errs, "--name Impostor") || !strings.Contains(errs, "only as Bob") {
		t.Errorf("stderr %q; want the refusal of the name", errs)
	}
	for _, args := range [][]string{{"mcp"}, {"mcp", "--name", "Bob"}} {
		code, out, errs := ia.run(handshakeLines, args...)
		if code != ExitOK || !strings.Contains(out, "the agent Bob") && !strings.Contains(out, "the person Bob") {
			t.Errorf("relay %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
		}
	}
}

// handshakeLines is an MCP client's first two lines.
const handshakeLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`
