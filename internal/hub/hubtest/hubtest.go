// Package hubtest starts real NATS servers for tests, in the manner of
// nats-server's own test helpers: random loopback ports, storage in the
// test's temporary folder, ready before use, shut down with the test.
package hubtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/relayhq/relay/internal/hub"
)

// Start runs a hub (token, JetStream) with its home in a new temporary
// folder on a random loopback port, and shuts it down when the test ends.
func Start(t testing.TB) *hub.Hub {
	t.Helper()
	return StartAt(t, t.TempDir(), "127.0.0.1:0")
}

// StartAt runs a hub with the given home and listen address ("" reuses the
// port of the hub that last ran on home) and shuts it down with the test.
// Start a hub again on the same home to test a restart.
func StartAt(t testing.TB, home, listen string) *hub.Hub {
	t.Helper()
	h, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

// Cluster runs n (at least 3 for JetStream) embedded NATS servers with
// JetStream, routed to each other on loopback, without auth, and returns
// them once JetStream has a meta leader. Clients use s.ClientURL(); streams
// need Replicas set (bus.Options.Replicas) to span the nodes.
func Cluster(t testing.TB, n int) []*server.Server {
	t.Helper()
	dir := t.TempDir()
	return cluster(t, n, func(name string) *server.Options {
		return &server.Options{ServerName: name, JetStream: true, StoreDir: filepath.Join(dir, name)}
	})
}

// ClusterConf is Cluster with each node's options read by nats-server's
// own configuration parser from a file that includes include (a server
// configuration include, as `relay creds init` writes: operator, system
// account, resolver). Clients need credentials the include trusts.
//
// An account of an operator's resolver is registered on a node at its
// first use there, and a JetStream request of that account is refused
// ("JetStream not enabled for account") by a node that has not yet
// registered it; so ClusterConf also waits until each of accounts (their
// public keys) has JetStream on every node.
func ClusterConf(t testing.TB, n int, include string, accounts ...string) []*server.Server {
	t.Helper()
	inc, err := os.ReadFile(include)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srvs := cluster(t, n, func(name string) *server.Options {
		folder := filepath.Join(dir, name)
		if err := os.MkdirAll(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		// nats-server resolves an include beside the file that names it.
		if err := os.WriteFile(filepath.Join(folder, filepath.Base(include)), inc, 0o600); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf("server_name: %s\ninclude %q\njetstream { store_dir: %q }\n", name, filepath.Base(include), filepath.Join(folder, "js"))
		path := filepath.Join(folder, "server.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		o, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("server configuration with %s: %v", include, err)
		}
		return o
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range srvs {
		for _, pub := range accounts {
			for {
				acc, err := s.LookupAccount(pub)
				if err == nil && acc.JetStreamEnabled() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %s: account %s has no JetStream after 30s (lookup: %v)", s.Name(), pub, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	return srvs
}

// cluster starts n servers with the options base returns for each name,
// on loopback ports routed to each other, and waits until JetStream's meta
// leader can place a stream on all n of them.
//
// Every listener takes a port of the kernel's choosing (-1), and each node
// routes to the nodes started before it, whose cluster addresses are known
// by then (routes gossip the rest): a port picked free in advance could be
// taken by another listener, even a node's own client port, before its
// node binds it.
func cluster(t testing.TB, n int, base func(name string) *server.Options) []*server.Server {
	t.Helper()
	srvs := make([]*server.Server, n)
	var routes []string
	for i := range srvs {
		o := base(fmt.Sprintf("n%d", i+1))
		o.Host, o.Port, o.NoSigs, o.NoLog = "127.0.0.1", -1, true, true
		o.Cluster = server.ClusterOpts{Name: "relay-test", Host: "127.0.0.1", Port: -1}
		o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		srvs[i] = s
		t.Cleanup(s.Shutdown)
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %s not ready", s.Name())
		}
		routes = append(routes, "nats-route://"+s.ClusterAddr().String())
	}
	// A meta leader alone is not enough: a stream of n replicas is placed
	// only on peers whose JetStream statistics the leader has received,
	// and before that it fails with "no suitable peers for placement".
	deadline := time.Now().Add(30 * time.Second)
	for {
		placeable, current := 0, true
		for _, s := range srvs {
			if s.JetStreamIsLeader() {
				placeable = len(s.JetStreamClusterPeers())
			}
			current = current && s.JetStreamIsClustered() && s.JetStreamIsCurrent()
		}
		if placeable == n && current {
			return srvs
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream cluster of %d: leader can place on %d peers after 30s", n, placeable)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// UserConns counts the open client connections on srvs authenticated as
// the user whose public key (nkey, or a user JWT's subject) is user.
func UserConns(t testing.TB, srvs []*server.Server, user string) int {
	t.Helper()
	n := 0
	for _, s := range srvs {
		cz, err := s.Connz(&server.ConnzOptions{Username: true})
		if err != nil {
			t.Fatalf("connections of %s: %v", s.Name(), err)
		}
		for _, c := range cz.Conns {
			if c.AuthorizedUser == user {
				n++
			}
		}
	}
	return n
}
