package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/natscreds"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestCredsCluster: relay's identities on a NATS deployment of the user's
// own. relay creds init writes the operator, the accounts and the server
// include; three real nats-server processes (the binary built from the
// module the hub embeds) routed to each other with JetStream run with it; relay
// creds issue writes Alice's and Bob's .creds, and their wrapped shells,
// on different nodes with RELAY_CREDS and RELAY_HUB, talk to each other.
// With Bob's credentials the server refuses a publish as Alice; relay
// creds revoke Bob --hub closes Bob's connections on every node, and Bob's
// wrapper tells its human, while Bob's shell goes on.
func TestCredsCluster(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(t.TempDir(), "creds")
	// Clipped: each append below makes a new environment.
	base := slices.Clip(append(baseEnv(t), "RELAY_HOME="+home, "TERM=xterm-256color", "PS1=$ "))
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(relayBin, args...)
		cmd.Env = env
		out, err := runWithin(t, cmd, 30*time.Second)
		if err != nil {
			t.Fatalf("relay %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(base, "creds", "init", "--out", dir)
	aliceCreds, bobCreds := filepath.Join(dir, "alice.creds"), filepath.Join(dir, "bob.creds")
	run(base, "creds", "issue", "Alice", "--out", aliceCreds, "--dir", dir)
	run(base, "creds", "issue", "Bob", "--out", bobCreds, "--dir", dir)
	if fi, err := os.Stat(bobCreds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bob.creds: %v, %v", fi, err)
	}
	srvs := natsProcCluster(t, 3, filepath.Join(dir, "relay-server.conf"))

	// The administrator's credentials make the workspace's stream and
	// bucket (an agent's may not).
	admin := append(base, "RELAY_HUB="+srvs[0].clientURL, "RELAY_CREDS="+filepath.Join(dir, "admin.creds"))
	run(admin, "agents")

	homes := map[string]string{}
	wrap := func(name, creds string, s *natsNode) *ptytest.Term {
		homes[name] = filepath.Join(t.TempDir(), name)
		env := append(base, "RELAY_HOME="+homes[name], "RELAY_HUB="+s.clientURL, "RELAY_CREDS="+creds)
		return ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30},
			relayBin, "wrap", "--name", name, "--", "bash", "--norc", "--noprofile")
	}
	alice, bob := wrap("Alice", aliceCreds, srvs[1]), wrap("Bob", bobCreds, srvs[2])
	testutil.Eventually(t, func() error {
		out := run(admin, "agents")
		for _, n := range []string{"Alice", "Bob"} {
			if !strings.Contains(out, n) {
				return testutil.Errorf("%s not in:\n%s", n, out)
			}
		}
		return nil
	})
	alice.Type("echo '@relay:Bob from node 2'\r")
	bob.WaitOutput(delivery.ShellText("from node 2"), 30*time.Second)
	bob.Type("echo '@relay:Alice from node 3'\r")
	alice.WaitOutput(delivery.ShellText("from node 3"), 30*time.Second)
	for _, c := range []struct {
		term *ptytest.Term
		text string
	}{{bob, "from node 2"}, {alice, "from node 3"}} {
		if n := strings.Count(ptytest.Screen(t, c.term.Output(), 100, 30), delivery.ShellText(c.text)); n != 1 {
			t.Errorf("%q shows %d times", c.text, n)
		}
	}

	// A raw publish as Alice with Bob's credentials: the server refuses it.
	refused := make(chan error, 1)
	raw, err := nats.Connect(srvs[0].clientURL, nats.UserCredentials(bobCreds),
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
	if err := raw.Publish(bus.SenderInboxSubject(bus.DefaultWorkspace, "Bob", "Alice"), []byte(`{"body":"forged"}`)); err != nil {
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

	bobKey := userKey(t, dir, "Bob")
	if n := natsUserConns(t, srvs, bobKey); n == 0 {
		t.Fatal("Bob's wrapper has no connection before the revocation")
	}
	if out := run(base, "creds", "revoke", "Bob", "--dir", dir, "--hub", srvs[0].clientURL); !strings.Contains(out, "revoked") {
		t.Errorf("relay creds revoke: %s", out)
	}
	testutil.Eventually(t, func() error {
		if n := natsUserConns(t, srvs, bobKey); n != 0 {
			return testutil.Errorf("%d connections of Bob are still open", n)
		}
		return nil
	})
	if out := run(admin, "agents"); !regexp.MustCompile(`(?m)^Bob\s.*\soffline \(credentials revoked\)\s`).MatchString(out) {
		t.Errorf("relay agents does not show Bob revoked:\n%s", out)
	}
	// Doctor, with Bob's credentials, says they were refused and what to do.
	doctor := exec.Command(relayBin, "doctor")
	doctor.Env = append(base, "RELAY_HOME="+homes["Bob"], "RELAY_HUB="+srvs[2].clientURL, "RELAY_CREDS="+bobCreds)
	if out, _ := runWithin(t, doctor, 60*time.Second); !strings.Contains(string(out), "the credentials in "+bobCreds+" were refused") {
		t.Errorf("relay doctor with Bob's revoked credentials:\n%s", out)
	}
	// Bob's human is told, once, and Bob's shell goes on.
	const told = "relay: the hub revoked Bob's credentials"
	bob.WaitOutput(told, 30*time.Second)
	bob.Type("echo still-$((40+2))\r")
	bob.WaitOutput("still-42", 30*time.Second)
	bob.Type("echo '@relay:Alice after the revocation'\r")
	bob.WaitOutput(delivery.ShellText("Not sent to Alice: the hub refused this agent's credentials"), 30*time.Second)
	if n := strings.Count(string(bob.Output()), told); n != 1 {
		t.Errorf("Bob's terminal says %d times %q:\n%s", n, told, ptytest.Screen(t, bob.Output(), 100, 30))
	}
	// Nothing a wrapper does was refused before that.
	for name, home := range homes {
		logs, _ := filepath.Glob(filepath.Join(home, "logs", "wrap-*.log"))
		if len(logs) == 0 {
			t.Errorf("no log of %s's wrapper in %s", name, home)
		}
		for _, l := range logs {
			if b, _ := os.ReadFile(l); strings.Contains(string(b), "Permissions Violation") {
				t.Errorf("the server refused %s's wrapper something:\n%s", name, b)
			}
		}
	}
}

// userKey is the public key relay creds issue gave agent name.
func userKey(t *testing.T, dir, name string) string {
	t.Helper()
	users, err := natscreds.Users(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if u.Name == name {
			return u.PublicKey
		}
	}
	t.Fatalf("no user %s in %s", name, dir)
	return ""
}
