package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/memory"
)

func TestFeedShowsAgentsMessagesAndReceipts(t *testing.T) {
	e := start(t)
	s := e.dial("")
	if hello := s.next(); hello.Type != dashboard.TypeHello || !hello.Snapshot || hello.Workspace != "default" || hello.Epoch == "" {
		t.Fatalf("first frame %+v, want a snapshot hello for workspace default", hello)
	}
	alice := agent(t, e.hub, "alice", "Claude Code")
	bob := agent(t, e.hub, "bob", "Codex")
	a := s.until("alice joining", isAgent("alice", ""))
	if a.Agent.CLI != "Claude Code" {
		t.Errorf("alice's CLI %q, want Claude Code", a.Agent.CLI)
	}
	s.until("bob joining", isAgent("bob", ""))
	if err := bob.SetState(context.Background(), bus.StateBusy); err != nil {
		t.Fatal(err)
	}
	s.until("bob busy", isAgent("bob", bus.StateBusy))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go bob.Inbox(ctx, func(ctx context.Context, d *bus.Delivery) {
		if strings.HasPrefix(d.Envelope.Body, "fail") {
			_ = d.Fail(ctx, "the agent exited")
			return
		}
		_ = d.Receipt(ctx, bus.StatusDelivered, "")
		_ = d.Ack()
		_ = d.Receipt(ctx, bus.StatusSeen, "")
	})
	env, err := alice.Send(context.Background(), "bob", "please run the tests")
	if err != nil {
		t.Fatal(err)
	}
	m := s.until("the message", isMessage("please run the tests"))
	if m.Message.ID != env.ID || m.Message.From != "alice" || m.Message.To != "bob" {
		t.Errorf("message frame %+v, want alice → bob with id %s", m.Message, env.ID)
	}
	s.until("delivered", isReceipt(env.ID, "bob", bus.StatusDelivered))
	if f := s.until("seen", isReceipt(env.ID, "bob", bus.StatusSeen)); f.At.IsZero() {
		t.Errorf("seen receipt %+v, want its time", f)
	}
	failed, err := alice.Send(context.Background(), "bob", "fail this one")
	if err != nil {
		t.Fatal(err)
	}
	if f := s.until("failed", isReceipt(failed.ID, "bob", bus.StatusFailed)); f.Reason != "the agent exited" {
		t.Errorf("failed receipt %+v, want the reason", f)
	}

	// A second client gets the same state as a snapshot.
	s2 := e.dial("")
	s2.next()
	seen := map[string]bool{}
	for len(seen) < 3 {
		f := s2.next()
		switch {
		case f.Type == dashboard.TypeAgent:
			seen[f.Agent.Name] = true
		case f.Type == dashboard.TypeMessage && f.Message.ID == env.ID:
			if f.Message.Status["bob"] != bus.StatusSeen {
				t.Errorf("snapshot shows the message %+v, want seen at bob", f.Message.Status)
			}
			var stages []string
			for _, st := range f.Message.Stages {
				stages = append(stages, string(st.Stage))
			}
			if got := strings.Join(stages, " "); got != "queued delivered seen" {
				t.Errorf("snapshot shows the stages %q, want queued delivered seen", got)
			}
			seen["message"] = true
		}
	}
}

func TestReconnectResumesWithoutGaps(t *testing.T) {
	e := start(t, func(o *dashboard.Options) { o.Ring = 64 })
	alice := agent(t, e.hub, "alice", "shell")
	agent(t, e.hub, "bob", "shell")
	s := e.dial("")
	hello := s.next()
	s.until("bob", isAgent("bob", ""))
	send := func(body string) {
		t.Helper()
		if _, err := alice.Send(context.Background(), "bob", body); err != nil {
			t.Fatal(err)
		}
	}
	send("one")
	s.until("one", isMessage("one"))
	last := s.last
	s.conn.Close()
	send("two")
	send("three")
	send("four")

	r := e.dial(query("since", fmt.Sprint(last), "epoch", hello.Epoch))
	if h := r.next(); h.Type != dashboard.TypeHello || h.Snapshot || h.Seq != last {
		t.Fatalf("resume hello %+v, want no snapshot at seq %d", h, last)
	}
	r.last = last
	var bodies []string
	for len(bodies) < 3 {
		if f := r.next(); f.Type == dashboard.TypeMessage { // next fails on a gap
			bodies = append(bodies, f.Message.Body)
		}
	}
	if got := strings.Join(bodies, " "); got != "two three four" {
		t.Errorf("resumed messages %q, want two three four", got)
	}

	// Another server's epoch, or a sequence older than the ring: a snapshot.
	if h := e.dial(query("since", fmt.Sprint(last), "epoch", "other")).next(); !h.Snapshot {
		t.Errorf("resume with a foreign epoch: %+v, want a snapshot", h)
	}
	for i := range 70 {
		send(fmt.Sprint("flood ", i))
	}
	r.until("the flood", isMessage("flood 69"))
	old := e.dial(query("since", "1", "epoch", hello.Epoch))
	if h := old.next(); !h.Snapshot || h.Seq < 70 {
		t.Errorf("resume from seq 1 after the ring moved on: %+v, want a snapshot", h)
	}
	old.until("the flood in the snapshot", isMessage("flood 69"))
}

func TestSendFromSocketReachesInbox(t *testing.T) {
	e := start(t)
	bob := agent(t, e.hub, "bob", "Gemini CLI")
	got := make(chan bus.Envelope, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go bob.Inbox(ctx, func(_ context.Context, d *bus.Delivery) { got <- d.Envelope; _ = d.Ack() })
	s := e.dial("")
	s.next()
	s.send(dashboard.Request{Type: dashboard.ReqSend, To: "bob", Body: "hello from the page"})
	sent := s.until("sent", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeSent })
	if sent.ID == "" || sent.To != "bob" || sent.Warning != "" {
		t.Errorf("sent frame %+v, want an id for bob without warning", sent)
	}
	select {
	case env := <-got:
		if env.From != "human" || env.Body != "hello from the page" || env.ID != sent.ID {
			t.Errorf("bob got %+v, want the page's message from human", env)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bob's inbox got nothing within 10s")
	}
	s.send(dashboard.Request{Type: dashboard.ReqSend, To: "bad name", Body: "x"})
	if f := s.until("an error", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeError }); f.Request != "send" || !strings.Contains(f.Error, "bad name") {
		t.Errorf("send to a bad name: %+v, want an error saying so", f)
	}
	s.send(dashboard.Request{Type: dashboard.ReqSend, To: "ghost", Body: "anyone?"})
	if f := s.until("sent", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeSent }); !strings.Contains(f.Warning, "unknown agent") {
		t.Errorf("send to a name that never joined: %+v, want a warning", f)
	}
}

func TestScreenOfTheSelectedAgent(t *testing.T) {
	e := start(t)
	bob := agent(t, e.hub, "bob", "shell")
	carol := agent(t, e.hub, "carol", "shell")
	// Bob's wrapper publishes only once asked (bus.WatchScreen).
	asked := make(chan struct{}, 8)
	stopAsk, err := bob.OnScreenWatch(func() { asked <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer stopAsk()
	if err := bob.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	s := e.dial("")
	s.next()
	s.send(dashboard.Request{Type: dashboard.ReqSelect, Agent: "bob"})
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("selecting bob did not ask bob's wrapper for its screen within 10s")
	}
	// The subscription may not be there yet: publish until a frame comes.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			_ = carol.PublishScreen(bus.Screen{Cols: 80, Rows: 24, Text: "carol's screen"})
			_ = bob.PublishScreen(bus.Screen{Cols: 80, Rows: 24, Text: fmt.Sprintf("$ make test\nrun %d", i)})
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for range 3 {
		f := s.until("bob's screen", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeScreen })
		if f.Screen.Agent != "bob" || !strings.HasPrefix(f.Screen.Text, "$ make test\nrun ") || f.Seq != 0 {
			t.Fatalf("screen frame %+v, want only bob's, without a seq", f.Screen)
		}
	}
}

func TestLongMessageWholeOnRequest(t *testing.T) {
	e := start(t)
	alice := agent(t, e.hub, "alice", "shell")
	agent(t, e.hub, "bob", "shell")
	long := strings.Repeat("é", 3000) // 6000 bytes
	env, err := alice.Send(context.Background(), "bob", long)
	if err != nil {
		t.Fatal(err)
	}
	s := e.dial("")
	m := s.until("the long message", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeMessage })
	if !m.Message.Truncated || m.Message.Size != len(long) || len(m.Message.Body) > dashboard.MaxFrameBody || !strings.HasPrefix(long, m.Message.Body) {
		t.Fatalf("long message frame: truncated %v, size %d, %d bytes shown; want cut at a character within %d",
			m.Message.Truncated, m.Message.Size, len(m.Message.Body), dashboard.MaxFrameBody)
	}
	s.send(dashboard.Request{Type: dashboard.ReqMessage, ID: env.ID})
	full := s.until("the whole message", func(f dashboard.Frame) bool { return f.Full })
	if full.Message.Body != long || full.Message.Truncated || full.Seq != 0 {
		t.Errorf("whole message: %d bytes, truncated %v, seq %d; want all %d bytes", len(full.Message.Body), full.Message.Truncated, full.Seq, len(long))
	}
	s.send(dashboard.Request{Type: dashboard.ReqMessage, ID: "nope"})
	if f := s.until("an error", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeError }); !strings.Contains(f.Error, `"nope"`) {
		t.Errorf("unknown message: %+v", f)
	}
}

func TestMemoryChangesAndSearch(t *testing.T) {
	e := start(t)
	s := e.dial("")
	s.next()
	mc := memory.NewClient(client(t, e.hub, "").Conn(), memory.DefaultSubjectPrefix)
	saved, _, err := mc.Save(context.Background(), memory.Memory{Text: "This project uses Prisma for database access", Author: "alice", Workspace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	f := s.until("the saved memory", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeMemory })
	if f.Op != "save" || f.Memory.ID != saved.ID || f.Memory.Author != "alice" || !f.Created {
		t.Errorf("memory frame %+v %+v, want alice's new memory %s", f, f.Memory, saved.ID)
	}
	if _, err := mc.Forget(context.Background(), saved.ID); err != nil {
		t.Fatal(err)
	}
	if f := s.until("the forgotten memory", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeMemory }); f.Op != "forget" || f.Memory.ID != saved.ID {
		t.Errorf("forget frame %+v, want %s forgotten", f, saved.ID)
	}
	if _, _, err := mc.Save(context.Background(), memory.Memory{Text: "Deploys go through the staging cluster first", Author: "bob", Workspace: "default"}); err != nil {
		t.Fatal(err)
	}
	s.send(dashboard.Request{Type: dashboard.ReqMemorySearch, Query: "staging"})
	r := s.until("results", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeMemoryResults })
	if r.Query != "staging" || len(r.Results) != 1 || !strings.Contains(r.Results[0].Text, "staging cluster") {
		t.Errorf("search results %+v, want the staging memory", r.Results)
	}
}

func TestTokenCookieAndOrigin(t *testing.T) {
	e := start(t)
	base := e.d.URL()
	hc := noRedirect()
	status := func(req *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	get := func(path string) *http.Request {
		req, _ := http.NewRequest("GET", strings.TrimSuffix(base, "/")+path, nil)
		return req
	}
	for _, path := range []string{"/", "/ws", "/static/app.js", "/?token=wrong", "/ws?token=wrong"} {
		if resp, _ := status(get(path)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a valid token: %d, want 401", path, resp.StatusCode)
		}
	}
	resp, _ := status(get("/?token=" + e.hub.Token() + "&workspace=team"))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?workspace=team" {
		t.Fatalf("GET /?token=…: %d to %q, want 303 to /?workspace=team (no token)", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v, want one", cookies)
	}
	c := cookies[0]
	if c.Name != dashboard.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Value == e.hub.Token() {
		t.Errorf("cookie %+v, want HttpOnly, SameSite=Strict, Path=/, not the token itself", c)
	}
	req := get("/")
	req.AddCookie(c)
	resp, body := status(req)
	if resp.StatusCode != 200 || !strings.Contains(body, `<script src="/static/app.js"`) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET / with the cookie: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}

	dial := func(origin string) (*http.Response, error) {
		h := http.Header{"Cookie": {c.Name + "=" + c.Value}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		conn, resp, err := websocket.DefaultDialer.Dial(e.wsURL(""), h)
		if err == nil {
			conn.Close()
		}
		return resp, err
	}
	if resp, err := dial("http://evil.example:" + strings.Split(strings.TrimSuffix(base, "/"), ":")[2]); !errors.Is(err, websocket.ErrBadHandshake) || resp.StatusCode != http.StatusForbidden {
		t.Errorf("websocket from another origin: %v, %v; want 403", err, resp)
	}
	if _, err := dial(strings.TrimSuffix(base, "/")); err != nil {
		t.Errorf("websocket from the page's own origin: %v", err)
	}
}

func TestRefusesNonLoopbackWithoutTLS(t *testing.T) {
	_, err := dashboard.New(dashboard.Options{URL: "nats://127.0.0.1:1", Token: "x", Addr: "0.0.0.0:0"})
	if !errors.Is(err, dashboard.ErrNotLoopback) {
		t.Errorf("New on 0.0.0.0: %v, want ErrNotLoopback", err)
	}
}

// The page's script never turns text into HTML: the browser test proves it
// for one body, this guards every future line of it.
func TestPageScriptNeverParsesHTML(t *testing.T) {
	src, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser"} {
		if strings.Contains(string(src), sink) {
			t.Errorf("static/app.js uses %s; set text with textContent instead (messages are untrusted)", sink)
		}
	}
}

func TestAgentPendingAndOffline(t *testing.T) {
	e := start(t)
	alice := agent(t, e.hub, "alice", "shell")
	bob := agent(t, e.hub, "bob", "Codex")
	bob.SetSkipped(1234)
	s := e.dial("")
	for range 2 {
		if _, err := alice.Send(context.Background(), "bob", "wait for me"); err != nil {
			t.Fatal(err)
		}
	}
	f := s.until("bob with 2 pending", func(f dashboard.Frame) bool {
		return f.Type == dashboard.TypeAgent && f.Agent.Name == "bob" && f.Agent.Pending == 2
	})
	if f.Agent.CLI != "Codex" {
		t.Errorf("bob %+v, want CLI Codex", f.Agent)
	}
	s.until("bob's skipped bytes", func(f dashboard.Frame) bool {
		return f.Type == dashboard.TypeAgent && f.Agent.Name == "bob" && f.Agent.Skipped == 1234
	})
	bob.Conn().Close() // a crash: heartbeats stop
	s.until("bob offline", isAgent("bob", bus.StateOffline))
}
