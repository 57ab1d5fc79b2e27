package bus_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/hub"
	"github.com/relayhq/relay/internal/testutil"
)

// startHub runs a hub with its home in a fresh temporary folder on a random
// loopback port and shuts it down with the test.
func startHub(t testing.TB) *hub.Hub {
	t.Helper()
	return startHubAt(t, testutil.Home(t), "127.0.0.1:0")
}

func startHubAt(t testing.TB, home, listen string) *hub.Hub {
	t.Helper()
	h, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

// connect joins the default workspace of h as name; mods adjust options.
func connect(t testing.TB, h *hub.Hub, name string, mods ...func(*bus.Options)) *bus.Client {
	t.Helper()
	o := bus.Options{URL: h.URL(), Token: h.Token(), Name: name}
	for _, m := range mods {
		m(&o)
	}
	return connectOpts(t, o)
}

func connectOpts(t testing.TB, o bus.Options) *bus.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// register connects and registers name.
func register(t testing.TB, h *hub.Hub, name string, mods ...func(*bus.Options)) *bus.Client {
	t.Helper()
	c := connect(t, h, name, mods...)
	if err := c.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// collector gathers what an Inbox hands over, acknowledging each delivery
// unless told not to.
type collector struct {
	mu    sync.Mutex
	got   []*bus.Delivery
	noAck bool
}

func (c *collector) handle(_ context.Context, d *bus.Delivery) {
	if !c.noAck {
		_ = d.Ack()
	}
	c.mu.Lock()
	c.got = append(c.got, d)
	c.mu.Unlock()
}

func (c *collector) bodies() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.got))
	for i, d := range c.got {
		out[i] = d.Envelope.Body
	}
	return out
}

func (c *collector) deliveries() []*bus.Delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*bus.Delivery(nil), c.got...)
}

// waitBodies polls until the collector holds exactly want, in order.
func (c *collector) waitBodies(t testing.TB, want ...string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		got := c.bodies()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return testutil.Errorf("inbox holds %q, want %q", got, want)
		}
		return nil
	})
}

// inbox runs c.Inbox in the background until the test ends or stop is
// called; stop waits for Inbox to return.
func inbox(t testing.TB, c *bus.Client, col *collector) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Inbox(ctx, col.handle) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("inbox: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// logBuffer is a slog.Logger writing into a buffer safe to read while
// clients log.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// startCluster runs three embedded NATS servers with JetStream, routed to
// each other on loopback, each with storage in the test's temp folder; it
// returns them once JetStream has a leader.
func startCluster(t testing.TB) []*server.Server {
	t.Helper()
	ports := make([]int, 3)
	for i := range ports {
		ports[i] = freePort(t)
	}
	routes := make([]string, 3)
	for i, p := range ports {
		routes[i] = "nats-route://127.0.0.1:" + strconv.Itoa(p)
	}
	dir := t.TempDir()
	srvs := make([]*server.Server, 3)
	for i := range srvs {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			NoSigs:     true,
			NoLog:      true,
			Cluster: server.ClusterOpts{
				Name: "relay-test",
				Host: "127.0.0.1",
				Port: ports[i],
			},
			Routes: server.RoutesFromStr(joinRoutes(routes, i)),
		}
		s, err := server.NewServer(o)
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
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		for _, s := range srvs {
			if !s.JetStreamIsClustered() || !s.JetStreamIsCurrent() {
				return testutil.Errorf("server %s: JetStream cluster not current", s.Name())
			}
		}
		if srvs[0].JetStreamIsLeader() || srvs[1].JetStreamIsLeader() || srvs[2].JetStreamIsLeader() {
			return nil
		}
		return testutil.Errorf("no JetStream meta leader yet")
	})
	return srvs
}

func joinRoutes(routes []string, except int) string {
	var out []string
	for i, r := range routes {
		if i != except {
			out = append(out, r)
		}
	}
	return strings.Join(out, ",")
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
