// Package hubtest starts real NATS servers for tests, in the manner of
// nats-server's own test helpers: random loopback ports, storage in the
// test's temporary folder, ready before use, shut down with the test.
package hubtest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/relayhq/relay/hub"
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
	ports := make([]int, n)
	routes := make([]string, n)
	for i := range ports {
		ports[i] = freePort(t)
		routes[i] = "nats-route://127.0.0.1:" + strconv.Itoa(ports[i])
	}
	dir := t.TempDir()
	srvs := make([]*server.Server, n)
	for i := range srvs {
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		name := fmt.Sprintf("n%d", i+1)
		s, err := server.NewServer(&server.Options{
			ServerName: name,
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   filepath.Join(dir, name),
			NoSigs:     true,
			NoLog:      true,
			Cluster:    server.ClusterOpts{Name: "relay-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(others, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		srvs[i] = s
		t.Cleanup(s.Shutdown)
	}
	for _, s := range srvs {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %s not ready", s.Name())
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader, current := false, true
		for _, s := range srvs {
			leader = leader || s.JetStreamIsLeader()
			current = current && s.JetStreamIsClustered() && s.JetStreamIsCurrent()
		}
		if leader && current {
			return srvs
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream cluster of %d has no leader after 30s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
