package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

const fastBeat = 200 * time.Millisecond

func withBeat(o *bus.Options) { o.Heartbeat = fastBeat }

// listed waits until c lists name, not offline, seen after since.
func listed(t *testing.T, c *bus.Client, name string, since time.Time) {
	t.Helper()
	testutil.Eventually(t, func() error {
		ps, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Name == name {
				if p.State == bus.StateOffline || !p.Seen.After(since) {
					return testutil.Errorf("%s is %s, seen %s (want a heartbeat after %s)", name, p.State, p.Seen, since)
				}
				return nil
			}
		}
		return testutil.Errorf("%s not listed in %+v", name, ps)
	})
}

// refused checks that another client cannot register name now.
func refused(t *testing.T, h *hub.Hub, name string) {
	t.Helper()
	c := connect(t, h, name, withBeat)
	if err := c.Register(context.Background()); !errors.Is(err, bus.ErrNameTaken) {
		t.Fatalf("a second %s registered: %v; want ErrNameTaken", name, err)
	}
}

// rollup publishes a presence rollup (purge of every key) on key as js's
// credential would, and returns the hub's answer.
func rollup(js jetstream.JetStream, ws, key string) error {
	msg := &nats.Msg{Subject: "$KV." + bus.PresenceBucket(ws) + "." + key, Header: nats.Header{}}
	msg.Header.Set("KV-Operation", "PURGE")
	msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupAll)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := js.PublishMsg(ctx, msg)
	return err
}

// TestPresenceRollup: a rollup on a presence key, with an agent's own
// credential (refused by the server's permissions) or with a credential
// allowed to write that key (refused by the bucket), wipes nobody: Alice
// stays listed, her heartbeats go on, and a second Alice is refused.
func TestPresenceRollup(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "Alice", withBeat)
	register(t, h, "Mallory", withBeat)
	admin, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	adminJS, _ := jetstream.New(admin)
	st, err := adminJS.Stream(context.Background(), "KV_"+bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := st.CachedInfo().Config; cfg.AllowRollup || !cfg.DenyPurge || !cfg.DenyDelete {
		t.Fatalf("presence stream allows rollup %v, denies purge %v, delete %v; want no rollups or purges",
			cfg.AllowRollup, cfg.DenyPurge, cfg.DenyDelete)
	}
	for _, tc := range []struct {
		name string
		js   jetstream.JetStream
	}{
		{"agent credential", agentConn(t, h, "Mallory")},
		{"a credential that may write the key", adminJS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rollup(tc.js, "default", "Mallory")
			t.Logf("rollup: %v", err)
			if tc.js == adminJS && err == nil {
				t.Error("the presence bucket took a rollup")
			}
			listed(t, alice, "Alice", time.Now())
			listed(t, alice, "Mallory", time.Now())
			refused(t, h, "Alice")
		})
	}
}

// TestPresenceWiped: when Alice's key is deleted or the whole bucket is
// lost, her heartbeats write it again, and the name stays hers: a second
// Alice is refused even while no key says so.
func TestPresenceWiped(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "Alice", withBeat)
	admin := connect(t, h, "admin")
	js, err := jetstream.New(admin.Conn())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "Alice"); err != nil {
		t.Fatal(err)
	}
	refused(t, h, "Alice")
	listed(t, admin, "Alice", time.Now())

	if err := js.DeleteKeyValue(ctx, bus.PresenceBucket("default")); err != nil {
		t.Fatal(err)
	}
	refused(t, h, "Alice") // its Connect makes the bucket anew, empty
	listed(t, alice, "Alice", time.Now())
}

// TestClaimOfDeadProcess: a fresh claim whose wrapper ran on this machine
// and whose process is gone is taken over at once; one whose process
// lives, or that was made on another host, is refused until it ages out.
func TestClaimOfDeadProcess(t *testing.T) {
	h := startHub(t)
	admin := connect(t, h, "admin")
	ctx := context.Background()
	js, _ := jetstream.New(admin.Conn())
	kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	pidns, _ := os.Readlink("/proc/self/ns/pid")

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	cases := []struct {
		name     string
		host     string
		pid      int
		takeable bool
	}{
		{"dead process on this host", host, dead.Process.Pid, true},
		{"live process on this host", host, live.Process.Pid, false},
		{"dead pid on another host", host + "-elsewhere", dead.Process.Pid, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "Bob" + string(rune('a'+i))
			rec, _ := json.Marshal(map[string]any{"state": "idle", "since": time.Now().UTC(), "session": "old",
				"heartbeat_ms": 60000, "host": tc.host, "pid": tc.pid, "pidns": pidns})
			if _, err := kv.Create(ctx, name, rec); err != nil {
				t.Fatal(err)
			}
			c := connect(t, h, name)
			err := c.Register(ctx)
			if tc.takeable && err != nil {
				t.Fatalf("Register: %v; want the dead wrapper's name taken at once", err)
			}
			if !tc.takeable && !errors.Is(err, bus.ErrNameTaken) {
				t.Fatalf("Register: %v; want ErrNameTaken", err)
			}
		})
	}
}

// TestAgentsOfDeadProcess: relay agents lists an agent whose wrapper ran
// on this machine and whose process is gone as offline at once, before
// its heartbeats age out (30 s for a wrapper); one whose process lives,
// or that ran on another host, stays listed as it said until then.
func TestAgentsOfDeadProcess(t *testing.T) {
	h := startHub(t)
	admin := connect(t, h, "admin")
	ctx := context.Background()
	js, _ := jetstream.New(admin.Conn())
	kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	pidns, _ := os.Readlink("/proc/self/ns/pid")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	cases := []struct {
		name string
		host string
		pid  int
		want bus.State
	}{
		{"dead process on this host", host, dead.Process.Pid, bus.StateOffline},
		{"live process on this host", host, live.Process.Pid, bus.StateIdle},
		{"dead pid on another host", host + "-elsewhere", dead.Process.Pid, bus.StateIdle},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "Carol" + string(rune('a'+i))
			rec, _ := json.Marshal(map[string]any{"state": "idle", "since": time.Now().UTC(), "session": "old",
				"heartbeat_ms": 10000, "host": tc.host, "pid": tc.pid, "pidns": pidns})
			if _, err := kv.Create(ctx, name, rec); err != nil {
				t.Fatal(err)
			}
			list, err := admin.Agents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(list, func(p bus.Presence) bool { return p.Name == name })
			if i < 0 {
				t.Fatalf("%s not listed", name)
			}
			if list[i].State != tc.want {
				t.Fatalf("%s listed %s, want %s", name, list[i].State, tc.want)
			}
		})
	}
}
