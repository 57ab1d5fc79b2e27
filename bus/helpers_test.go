package bus_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// startHub runs a hub with its home in a fresh temporary folder on a random
// loopback port and shuts it down with the test.
func startHub(t testing.TB) *hub.Hub { return hubtest.Start(t) }

func startHubAt(t testing.TB, home, listen string) *hub.Hub { return hubtest.StartAt(t, home, listen) }

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

// startCluster runs three routed JetStream servers (see hubtest.Cluster).
func startCluster(t testing.TB) []*server.Server { return hubtest.Cluster(t, 3) }
