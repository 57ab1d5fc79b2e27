package bus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
)

func TestThreeNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	srvs := startCluster(t)
	on := func(s *server.Server, name string) *bus.Client {
		c := connectOpts(t, bus.Options{URL: s.ClientURL(), Name: name, Replicas: 3, Heartbeat: 200 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Register(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice := on(srvs[0], "alice")
	bob := on(srvs[1], "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Bob is not reading yet: these wait, replicated on all three nodes.
	var want []string
	for i := range 5 {
		body := fmt.Sprintf("before the node went down %d", i)
		if _, err := alice.Send(ctx, "bob", body); err != nil {
			t.Fatal(err)
		}
		want = append(want, body)
	}
	srvs[2].Shutdown()
	srvs[2].WaitForShutdown()
	for i := range 5 {
		body := fmt.Sprintf("after the node went down %d", i)
		if _, err := alice.Send(ctx, "bob", body); err != nil {
			t.Fatal(err)
		}
		want = append(want, body)
	}
	var col collector
	inbox(t, bob, &col)
	col.waitBodies(t, want...)

	var back collector
	inbox(t, alice, &back)
	if _, err := bob.Send(ctx, "*", "broadcast across nodes"); err != nil {
		t.Fatal(err)
	}
	back.waitBodies(t, "broadcast across nodes")
}

func TestServerWithoutJetStream(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	_, err = bus.Connect(context.Background(), bus.Options{URL: s.ClientURL(), Name: "alice"})
	if err == nil || !strings.Contains(err.Error(), "relay needs JetStream") {
		t.Errorf("connect to a server without JetStream: %v, want advice", err)
	}
}

// TestInboxSurvivesItsLeaderNode: the node that leads an agent's inbox
// dies while the agent reads it; the next message still arrives within
// seconds (the client's pull goes to the new leader instead of waiting out
// the library's 30 s heartbeat).
func TestInboxSurvivesItsLeaderNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	srvs := startCluster(t)
	var urls []string
	for _, s := range srvs {
		urls = append(urls, s.ClientURL())
	}
	url := strings.Join(urls, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	on := func(name string) *bus.Client {
		c := connectOpts(t, bus.Options{URL: url, Name: name, Replicas: 3})
		if err := c.Register(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob := on("alice"), on("bob")
	var col collector
	inbox(t, bob, &col)
	if _, err := alice.Send(ctx, "bob", "before"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "before")

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, bus.StreamName(bus.DefaultWorkspace), "bob")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	nc.Close()
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		t.Fatalf("bob's inbox has no leader: %+v, %v", info, err)
	}
	for _, s := range srvs {
		if s.Name() == info.Cluster.Leader {
			s.Shutdown()
			s.WaitForShutdown()
		}
	}
	if _, err := alice.Send(ctx, "bob", "after its leader died"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "before", "after its leader died")
}
