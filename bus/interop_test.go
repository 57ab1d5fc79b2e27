package bus_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// natsCLI returns a function running the real `nats` CLI against h, or
// skips the test when `nats` is not installed.
func natsCLI(t *testing.T, h *hub.Hub) func(ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("nats")
	if err != nil {
		t.Skip("the nats CLI is not on PATH: go install github.com/nats-io/natscli/nats@v0.5.0")
	}
	home := t.TempDir() // no user contexts
	return func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, path, append([]string{"--no-context", "--server", h.URL(), "--token", h.Token()}, args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		return cmd
	}
}

func TestNatsCLIPublishesToAnAgent(t *testing.T) {
	h := startHub(t)
	run := natsCLI(t, h)
	bob := register(t, h, "bob")
	var col collector
	inbox(t, bob, &col)
	env := map[string]any{
		"id": "cli-1", "workspace": "default", "from": "script", "to": "bob",
		"body": "hello from the nats CLI", "created": time.Now().UTC().Format(time.RFC3339Nano),
	}
	data, _ := json.Marshal(env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := run(ctx, "pub", "-H", "Nats-Msg-Id:cli-1", bus.InboxSubject("default", "bob"), string(data)).CombinedOutput()
	if err != nil {
		t.Fatalf("nats pub: %v\n%s", err, out)
	}
	col.waitBodies(t, "hello from the nats CLI")
	if d := col.deliveries()[0]; d.Envelope.ID != "cli-1" || d.Envelope.From != "script" {
		t.Errorf("got %+v", d.Envelope)
	}
	// The same id again is dropped by JetStream's de-duplication.
	if out, err := run(ctx, "pub", "-H", "Nats-Msg-Id:cli-1", bus.InboxSubject("default", "bob"), string(data)).CombinedOutput(); err != nil {
		t.Fatalf("nats pub: %v\n%s", err, out)
	}
	if _, err := register(t, h, "alice").Send(ctx, "bob", "after the duplicate"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "hello from the nats CLI", "after the duplicate")
}

func TestNatsCLISubscriberSeesTraffic(t *testing.T) {
	h := startHub(t)
	run := natsCLI(t, h)
	alice := register(t, h, "alice")
	register(t, h, "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const subject = "relay.default.inbox.>"
	var out testutil.Buffer
	cmd := run(ctx, "sub", "--raw", "--count", "1", subject)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The hub lists the CLI's subscription by its subject: a count of all
	// subscriptions would also move when a wrapper's own (which a client
	// does not flush) reaches the hub late.
	testutil.Eventually(t, func() error {
		sz, err := h.Server().Subsz(&server.SubszOptions{Subscriptions: true, Limit: 1 << 16})
		if err != nil {
			return err
		}
		for _, d := range sz.Subs {
			if d.Subject == subject {
				return nil
			}
		}
		return testutil.Errorf("nats sub has not subscribed yet: %s", out.String())
	})
	env, err := alice.Send(ctx, "bob", "visible on the wire")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nats sub: %v\n%s", err, out.String())
	}
	line := strings.TrimSpace(out.String())
	line = line[strings.Index(line, "{"):]
	got, err := bus.ParseEnvelope([]byte(line))
	if err != nil || got.ID != env.ID || got.Body != "visible on the wire" {
		t.Errorf("nats sub printed %q (%v), want alice's envelope %s", out.String(), err, env.ID)
	}
}
