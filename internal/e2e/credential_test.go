package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/identity"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// inboxLog collects what an agent's inbox delivers.
type inboxLog struct {
	mu   sync.Mutex
	envs []bus.Envelope
}

func (r *inboxLog) find(body string) (bus.Envelope, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.envs {
		if e.Body == body {
			return e, true
		}
	}
	return bus.Envelope{}, false
}

// inboxOf registers name with the administrator's token and collects its
// messages.
func inboxOf(t *testing.T, h *hub.Hub, name string) *inboxLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Register(ctx); err != nil {
		t.Fatal(err)
	}
	r := &inboxLog{}
	go c.Inbox(ctx, func(ctx context.Context, d *bus.Delivery) {
		r.mu.Lock()
		r.envs = append(r.envs, d.Envelope)
		r.mu.Unlock()
		_ = d.Ack()
	})
	return r
}

// rawAgent connects to h with an agent's credential as any NATS client
// would, and records the server's permission errors.
type rawAgent struct {
	nc   *nats.Conn
	mu   sync.Mutex
	errs []string
}

func dialAgent(t *testing.T, h *hub.Hub, cred hub.Credential) (*rawAgent, error) {
	t.Helper()
	a := &rawAgent{}
	nc, err := nats.Connect(h.URL(), nats.Token(cred.Token), nats.CustomInboxPrefix(cred.InboxPrefix),
		nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			a.mu.Lock()
			a.errs = append(a.errs, err.Error())
			a.mu.Unlock()
		}))
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	a.nc = nc
	return a, nil
}

func (a *rawAgent) violations() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.errs, "\n")
}

// publishEnvelope publishes an envelope on subject through JetStream, as the
// nats CLI's `nats pub` (with a Nats-Msg-Id) would.
func publishEnvelope(nc *nats.Conn, subject, from, to, body string) error {
	env := bus.Envelope{ID: fmt.Sprintf("m%d", time.Now().UnixNano()), Workspace: "default", From: from, To: to, Body: body, Created: time.Now().UTC()}
	data, _ := json.Marshal(env)
	js, err := nc.JetStream()
	if err != nil {
		return err
	}
	_, err = js.Publish(subject, data, nats.MsgId(env.ID), nats.AckWait(2*time.Second))
	return err
}

// TestAgentCredential: an agent's own credential sends as that agent and
// nothing else. A forged from is refused: by the server on a subject that
// names another sender (permissions violation) or none (the administrator's
// subject), and by the recipient when the envelope's from does not match
// the sender in the subject. Revoked, the credential stops working at once,
// its connection closed. The administrator's token still does anything, as
// the nats CLI would.
func TestAgentCredential(t *testing.T) {
	h := hubtest.Start(t)
	bob := inboxOf(t, h, "Bob")
	cred, err := h.Issue("default", "Carol")
	if err != nil {
		t.Fatal(err)
	}
	carol, err := dialAgent(t, h, cred)
	if err != nil {
		t.Fatalf("connect with Carol's credential: %v", err)
	}

	t.Run("sends as itself", func(t *testing.T) {
		if err := publishEnvelope(carol.nc, bus.SenderInboxSubject("default", "Bob", "Carol"), "Carol", "Bob", "hello from carol"); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, func() error {
			if e, ok := bob.find("hello from carol"); !ok || e.From != "Carol" {
				return fmt.Errorf("not received from Carol (%+v)", e)
			}
			return nil
		})
	})

	forged := []struct{ name, subject, from string }{
		{"another sender in the subject", bus.SenderInboxSubject("default", "Bob", "Alice"), "Alice"},
		{"no sender in the subject", bus.InboxSubject("default", "Bob"), "Alice"},
		{"another workspace", bus.SenderInboxSubject("other", "Bob", "Carol"), "Carol"},
	}
	for _, f := range forged {
		t.Run("server refuses "+f.name, func(t *testing.T) {
			body := "forged: " + f.name
			err := publishEnvelope(carol.nc, f.subject, f.from, "Bob", body)
			if err == nil {
				t.Fatalf("the hub stored a publish on %s with Carol's credential", f.subject)
			}
			testutil.Eventually(t, func() error {
				if v := carol.violations(); !strings.Contains(v, "Permissions Violation") || !strings.Contains(v, f.subject) {
					return fmt.Errorf("no permissions violation for %s reported by the server: %q", f.subject, v)
				}
				return nil
			})
		})
	}
	t.Run("recipient refuses a from that is not the sender", func(t *testing.T) {
		if err := publishEnvelope(carol.nc, bus.SenderInboxSubject("default", "Bob", "Carol"), "Alice", "Bob", "forged in the body"); err != nil {
			t.Fatal(err)
		}
		// A message sent after it arrives; the forged one never does.
		if err := publishEnvelope(carol.nc, bus.SenderInboxSubject("default", "Bob", "Carol"), "Carol", "Bob", "after the forged one"); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, func() error {
			if _, ok := bob.find("after the forged one"); !ok {
				return errors.New("the message after the forged one did not arrive")
			}
			return nil
		})
		if e, ok := bob.find("forged in the body"); ok {
			t.Errorf("Bob received the forged envelope: %+v", e)
		}
	})
	t.Run("cannot read another inbox's replies or ask for credentials", func(t *testing.T) {
		if _, err := carol.nc.Request(hub.IssueSubject, []byte(`{"workspace":"default","name":"Bob"}`), time.Second); err == nil {
			t.Error("Carol's credential got a credential issued")
		}
		if _, err := carol.nc.SubscribeSync("_INBOX.>"); err == nil {
			_ = carol.nc.Flush()
		}
		testutil.Eventually(t, func() error {
			if v := carol.violations(); !strings.Contains(v, `Subscription to "_INBOX.>"`) {
				return fmt.Errorf("no violation for subscribing to _INBOX.>: %q", v)
			}
			return nil
		})
	})

	t.Run("admin token works as the nats CLI", func(t *testing.T) {
		nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if err := publishEnvelope(nc, bus.InboxSubject("default", "Bob"), "ops-script", "Bob", "from the nats CLI"); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, func() error {
			if e, ok := bob.find("from the nats CLI"); !ok || e.From != "ops-script" {
				return fmt.Errorf("not received (%+v)", e)
			}
			return nil
		})
	})

	t.Run("revoked", func(t *testing.T) {
		if !h.Revoke("default", "Carol") {
			t.Fatal("Revoke found no credential for Carol")
		}
		testutil.Eventually(t, func() error {
			if !carol.nc.IsClosed() {
				return fmt.Errorf("Carol's connection is still %v", carol.nc.Status())
			}
			return nil
		})
		if _, err := dialAgent(t, h, cred); !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("connect with a revoked credential: %v, want an authorization violation", err)
		}
	})
}

// TestAgentCredentialEndsWithAgent: the credential a wrapped agent's
// identity file holds is its own (not the workspace token), works while the
// agent runs, and stops working when it leaves.
func TestAgentCredentialEndsWithAgent(t *testing.T) {
	tm := newTeam(t)
	copyTo := filepath.Join(t.TempDir(), "identity.json")
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice")
	alice.Type(fmt.Sprintf("cp \"$RELAY_AGENT_FILE\" %s && echo COPIED-$((40+2))\r", copyTo))
	alice.WaitOutput("COPIED-42", 10*time.Second)
	id, err := identity.Read(func(string) string { return copyTo })
	if err != nil {
		t.Fatal(err)
	}
	if id.Token == "" || id.Token == tm.hub.Token() || id.Name != "Alice" {
		t.Fatalf("identity file holds name %q and token %.8q…: want Alice's own credential", id.Name, id.Token)
	}
	cred := hub.Credential{Token: id.Token, InboxPrefix: id.InboxPrefix}
	a, err := dialAgent(t, tm.hub, cred)
	if err != nil {
		t.Fatalf("Alice's credential does not work while Alice runs: %v", err)
	}
	alice.Type("exit\r")
	alice.Wait(20 * time.Second)
	testutil.Eventually(t, func() error {
		if !a.nc.IsClosed() {
			return errors.New("the connection made with Alice's credential is still open")
		}
		return nil
	})
	if _, err := dialAgent(t, tm.hub, cred); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("connect with Alice's credential after she left: %v, want an authorization violation", err)
	}
	if _, err := os.Stat(filepath.Join(tm.hub.Home(), "agents")); err == nil {
		t.Logf("note: %s exists", filepath.Join(tm.hub.Home(), "agents"))
	}
}
