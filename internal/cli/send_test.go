package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// ackEater is a TCP proxy in front of a hub that, once a client published
// to an inbox, stops passing anything back to that client: the hub stores
// the message, its acknowledgement never arrives (a hub overloaded, or cut
// off, at the worst moment).
type ackEater struct {
	ln   net.Listener
	hub  string
	mu   sync.Mutex
	cons []net.Conn
}

func newAckEater(t *testing.T, hubAddr string) *ackEater {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &ackEater{ln: ln, hub: hubAddr}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.cons {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *ackEater) url() string { return "nats://" + p.ln.Addr().String() }

func (p *ackEater) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.hub)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.cons = append(p.cons, client, server)
		p.mu.Unlock()
		published := make(chan struct{})
		go func() { // client → hub, watching for the publish
			var once sync.Once
			var tail []byte
			buf := make([]byte, 32<<10)
			for {
				n, err := client.Read(buf)
				if n > 0 {
					tail = append(tail, buf[:n]...)
					if bytes.Contains(tail, []byte("PUB relay.default.inbox.")) {
						once.Do(func() { close(published) })
					}
					tail = tail[max(0, len(tail)-64):]
					if _, err := server.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // hub → client, until the publish
			buf := make([]byte, 32<<10)
			for {
				n, err := server.Read(buf)
				select {
				case <-published:
					_, _ = io.Copy(io.Discard, server)
					return
				default:
				}
				if n > 0 {
					if _, err := client.Write(buf[:n]); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// TestSendSaysWhyWithinItsTimeout is issue 29's lost relay sends under
// load: a hub that stored the message but whose acknowledgement never
// came back. relay send exits 1 within its --timeout (and the moment it
// gives the connection to close), saying it was not stored in time, that
// it may have been, and the id to send it again with; sent again with
// that id, the hub keeps one copy. (Before, it took 30 s, 15 s of retries
// and as long closing a connection that no longer answered, past a
// caller's patience, and said only "context deadline exceeded".)
func TestSendSaysWhyWithinItsTimeout(t *testing.T) {
	h := hubtest.Start(t)
	p := newAckEater(t, strings.TrimPrefix(h.URL(), "nats://"))
	c := newHubCLI(t)
	c.vars["RELAY_TOKEN"] = h.Token()

	start := time.Now()
	code, _, errs := c.run("", "send", "--hub", p.url(), "--timeout", "3s", "--from", "Bob", "Alice", "under load")
	took := time.Since(start)
	t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), errs)
	if code != 1 || !strings.Contains(errs, "not stored within 3s") || !strings.Contains(errs, "send again with --id") {
		t.Fatalf("send whose acknowledgement never came: exit %d, stderr %q; want 1, not stored within 3s, and how to send again", code, errs)
	}
	if limit := 3*time.Second + sendCloseWait + 3*time.Second; took > limit {
		t.Errorf("relay send took %v with --timeout 3s; want at most %v", took.Round(time.Millisecond), limit)
	}
	id := regexp.MustCompile(`--id (\S+) and`).FindStringSubmatch(errs)
	if id == nil {
		t.Fatalf("no id in %q", errs)
	}
	code, _, errs = c.run("", "send", "--hub", h.URL(), "--id", id[1], "--from", "Bob", "Alice", "under load")
	if code != 0 {
		t.Fatalf("send again with --id %s: exit %d, %q", id[1], code, errs)
	}

	nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, bus.StreamName(bus.DefaultWorkspace))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(bus.InboxSubject(bus.DefaultWorkspace, "Alice")))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[bus.InboxSubject(bus.DefaultWorkspace, "Alice")]; n != 1 {
		t.Errorf("Alice's inbox holds %d copies, want 1", n)
	}
}
