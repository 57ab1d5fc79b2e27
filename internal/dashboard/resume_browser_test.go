package dashboard_test

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// dropProxy forwards TCP to target, remembers what clients sent, and can
// cut every open connection: a network drop between page and dashboard.
type dropProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	sent   strings.Builder
}

func newDropProxy(t *testing.T, target string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.drop() })
	go p.serve()
	return p
}

func (p *dropProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(io.MultiWriter(u, p), c); u.Close() }()
		go func() { _, _ = io.Copy(c, u); c.Close() }()
	}
}

// Write records what a client sent (the request lines are what matter).
func (p *dropProxy) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent.Write(b)
}

func (p *dropProxy) requests() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent.String()
}

func (p *dropProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestBrowserResumesAfterADrop(t *testing.T) {
	ctx := browser(t)
	e := start(t)
	alice := agent(t, e.hub, "alice", "shell")
	agent(t, e.hub, "bob", "shell")
	bg := context.Background()
	if _, err := alice.Send(bg, "bob", "before the drop"); err != nil {
		t.Fatal(err)
	}
	p := newDropProxy(t, strings.TrimSuffix(strings.TrimPrefix(e.d.URL(), "http://"), "/"))
	open := "http://" + p.ln.Addr().String() + "/?token=" + e.hub.Token()
	if err := chromedp.Do(ctx, chromedp.Navigate(open), chromedp.WaitVisible(chromedp.ID("agents"))); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "the first message", `document.getElementById("messages").textContent.includes("before the drop")`)

	p.drop()
	within(t, ctx, 5*time.Second, "the lost connection", `document.getElementById("conn").textContent !== "live"`)
	if _, err := alice.Send(bg, "bob", "during the drop"); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 10*time.Second, "the message sent while away",
		`document.getElementById("conn").textContent === "live" && document.getElementById("messages").textContent.includes("during the drop")`)
	resumed := regexp.MustCompile(`GET /ws\?\S*since=[1-9][0-9]*&epoch=[0-9a-f]+ HTTP/1.1`)
	if !resumed.MatchString(p.requests()) {
		t.Errorf("the page did not reconnect with since and epoch; its requests:\n%s", requestLines(p.requests()))
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#messages li").length`))
	if err != nil || n != 2 {
		t.Errorf("the page shows %d messages (%v), want 2: nothing lost, nothing twice", n, err)
	}
}

func requestLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\r\n") {
		if strings.HasPrefix(l, "GET ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
