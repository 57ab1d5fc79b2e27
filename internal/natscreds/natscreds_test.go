package natscreds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/natscreds"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// issue writes agent name's credentials of workspace default into dir.
func issue(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := natscreds.Issue(dir, bus.DefaultWorkspace, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".creds")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logs collects what clients log, to show a permission the server refused.
type logs struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// agent connects as name with its own credentials (and the inbox prefix
// they allow), registers and reads its inbox into got.
func agent(t *testing.T, url, creds, name string, l *logs, onRefused func(error)) (*bus.Client, *received) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, bus.Options{
		URL: url, Creds: creds, Name: name, InboxPrefix: hub.AgentInboxPrefix(bus.DefaultWorkspace, name),
		Heartbeat: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(l, nil)), OnRefused: onRefused,
	})
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Register(ctx); err != nil {
		t.Fatalf("register %s: %v\n%s", name, err, l)
	}
	got := &received{}
	ictx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.Inbox(ictx, func(_ context.Context, d *bus.Delivery) {
			_ = d.Ack()
			got.add(d.Envelope.From + ": " + d.Envelope.Body)
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	return c, got
}

type received struct {
	mu   sync.Mutex
	msgs []string
}

func (r *received) add(s string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, s)
	r.mu.Unlock()
}

func (r *received) wait(t *testing.T, want ...string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if fmt.Sprint(r.msgs) != fmt.Sprint(want) {
			return testutil.Errorf("got %q, want %q", r.msgs, want)
		}
		return nil
	})
}

// TestClusterWithRelayCreds: three routed nats-servers with JetStream,
// configured by the include `relay creds init` writes; agents with the
// credentials `relay creds issue` writes exchange messages, may not send
// as another agent, and a revoked agent is cut off on every node.
func TestClusterWithRelayCreds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	dir := filepath.Join(t.TempDir(), "creds")
	if err := natscreds.Init(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{natscreds.OperatorSeed, natscreds.AccountSeed, natscreds.SystemSeed, natscreds.AdminCreds, natscreds.SystemCreds} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if err := natscreds.Init(dir); !errors.Is(err, natscreds.ErrExists) {
		t.Errorf("a second init: %v, want ErrExists", err)
	}
	aliceCreds, bobCreds := issue(t, dir, "Alice"), issue(t, dir, "Bob")
	seed, err := os.ReadFile(filepath.Join(dir, natscreds.AccountSeed))
	if err != nil {
		t.Fatal(err)
	}
	acc, err := nkeys.FromSeed(bytes.TrimSpace(seed))
	if err != nil {
		t.Fatal(err)
	}
	accPub, err := acc.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	srvs := hubtest.ClusterConf(t, 3, filepath.Join(dir, natscreds.Include), accPub)

	// The administrator makes the workspace's stream and bucket, on three
	// nodes, and guards the bucket; agents' credentials may not.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := bus.Connect(ctx, bus.Options{URL: srvs[0].ClientURL(), Creds: filepath.Join(dir, natscreds.AdminCreds), Replicas: 3})
	if err != nil {
		t.Fatalf("administrator: %v", err)
	}
	defer admin.Close()

	var l logs
	alice, aliceGot := agent(t, srvs[1].ClientURL(), aliceCreds, "Alice", &l, nil)
	bobRefused := make(chan error, 1)
	bob, bobGot := agent(t, srvs[2].ClientURL(), bobCreds, "Bob", &l, func(err error) { bobRefused <- err })
	if _, err := alice.Send(ctx, "Bob", "hello from node 2"); err != nil {
		t.Fatalf("Alice sends: %v\n%s", err, &l)
	}
	if _, err := bob.Send(ctx, "Alice", "hello from node 3"); err != nil {
		t.Fatalf("Bob sends: %v\n%s", err, &l)
	}
	bobGot.wait(t, "Alice: hello from node 2")
	aliceGot.wait(t, "Bob: hello from node 3")
	testutil.Eventually(t, func() error {
		list, err := admin.Agents(ctx)
		if err != nil {
			return err
		}
		if len(list) != 2 {
			return testutil.Errorf("agents: %+v, want Alice and Bob", list)
		}
		return nil
	})
	if strings.Contains(l.String(), "Permissions Violation") {
		t.Errorf("a wrapper's work was refused by the server:\n%s", &l)
	}

	// With Bob's credentials, a raw publish as Alice is refused.
	refused := make(chan error, 1)
	raw, err := nats.Connect(srvs[0].ClientURL(), nats.UserCredentials(bobCreds),
		nats.CustomInboxPrefix(hub.AgentInboxPrefix(bus.DefaultWorkspace, "Bob")),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case refused <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	forged := bus.SenderInboxSubject(bus.DefaultWorkspace, "Bob", "Alice")
	if err := raw.Publish(forged, []byte(`{"from":"Alice","body":"forged"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-refused:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("publish as Alice with Bob's credentials: %v, want a permissions violation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not refuse a publish as Alice with Bob's credentials")
	}
	raw.Close()

	// Revoked: the server closes Bob's connections and refuses new ones.
	closed := make(chan error, 1)
	watched, err := nats.Connect(srvs[2].ClientURL(), nats.UserCredentials(bobCreds), nats.NoReconnect(),
		nats.CustomInboxPrefix(hub.AgentInboxPrefix(bus.DefaultWorkspace, "Bob")),
		nats.ClosedHandler(func(nc *nats.Conn) { closed <- nc.LastError() }))
	if err != nil {
		t.Fatal(err)
	}
	defer watched.Close()
	users, err := natscreds.Users(dir)
	if err != nil || len(users) != 2 || users[1].Name != "Bob" {
		t.Fatalf("users: %+v, %v", users, err)
	}
	bobKey := users[1].PublicKey
	// Bob's client and watched; under load a node can still list a
	// connection of Bob's client that it replaced, so at least 2.
	if n := hubtest.UserConns(t, srvs, bobKey); n < 2 {
		t.Fatalf("Bob has %d connections before the revocation, want at least 2", n)
	}
	if _, err := natscreds.Revoke(dir, bus.DefaultWorkspace, "Bob"); err != nil {
		t.Fatal(err)
	}
	if err := natscreds.Push(ctx, dir, bus.Options{URL: srvs[0].ClientURL()}); err != nil {
		t.Fatalf("push the account: %v", err)
	}
	select {
	case err := <-closed:
		t.Logf("Bob's connection closed: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Bob's connection on another node is still open after the revocation")
	}
	if nc, err := nats.Connect(srvs[1].ClientURL(), nats.UserCredentials(bobCreds)); err == nil {
		nc.Close()
		t.Error("Bob's revoked credentials still connect")
	}
	testutil.Eventually(t, func() error {
		if n := hubtest.UserConns(t, srvs, bobKey); n != 0 {
			return testutil.Errorf("%d connections of Bob are still open", n)
		}
		return nil
	})
	// Bob's own client gave up reconnecting, and says it was revoked.
	select {
	case err := <-bobRefused:
		if !errors.Is(err, bus.ErrRevoked) {
			t.Errorf("Bob's client was refused with %v, want ErrRevoked", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("Bob's client was not told that its credentials were revoked")
	}
	// Alice is not touched.
	if _, err := alice.Send(ctx, "Alice", "still here"); err != nil {
		t.Fatal(err)
	}
	aliceGot.wait(t, "Bob: hello from node 3", "Alice: still here")
}
