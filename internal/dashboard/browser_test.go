package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// chromium finds Debian's chromium (installed by .ci/run), or skips.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RELAY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium, or set RELAY_CHROMIUM): the browser test of the dashboard is skipped")
	return ""
}

// browser starts headless Chromium with a fresh profile and no network
// chatter, and returns a context for chromedp actions.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start the browser now
		t.Fatalf("start %s: %v", exe, err)
	}
	return ctx
}

// within polls the page until script evaluates to true, failing after d.
func within(t *testing.T, ctx context.Context, d time.Duration, what, script string) time.Duration {
	t.Helper()
	start := time.Now()
	testutil.WaitFor(t, d, 20*time.Millisecond, func() error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script))
		if err != nil {
			return err
		}
		if !ok {
			return testutil.Errorf("the page does not show %s yet", what)
		}
		return nil
	})
	return time.Since(start)
}

// text is the page's text content of the first element matching selector.
func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, selector)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBrowserShowsTheTeamLive(t *testing.T) {
	ctx := browser(t)
	e := start(t)
	bg, cancel := context.WithCancel(context.Background())
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(e.d.TokenURL()), chromedp.WaitVisible(chromedp.ID("agents"))); err != nil {
		t.Fatal(err)
	}
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || strings.Contains(loc, "token") {
		t.Errorf("the page stayed at %q (%v), want the token gone from the address", loc, err)
	}
	within(t, ctx, 5*time.Second, "the live feed", `document.getElementById("conn").textContent === "live"`)

	// Two scripted agents join and talk.
	alice := agent(t, e.hub, "alice", "Claude Code")
	bob := agent(t, e.hub, "bob", "Codex")
	bobGot := make(chan bus.Envelope, 8)
	for _, c := range []*bus.Client{alice, bob} {
		go c.Inbox(bg, func(ctx context.Context, d *bus.Delivery) {
			_ = d.Receipt(ctx, bus.StatusDelivered, "")
			_ = d.Ack()
			_ = d.Receipt(ctx, bus.StatusSeen, "")
			if d.Envelope.To == "bob" {
				bobGot <- d.Envelope
			}
		})
	}
	if err := bob.SetState(bg, bus.StateBusy); err != nil {
		t.Fatal(err)
	}
	took := within(t, ctx, 10*time.Second, "both agents",
		`!!document.querySelector('#agents li[data-name="alice"]') && !!document.querySelector('#agents li[data-name="bob"] .state.busy')`)
	t.Logf("both agents shown %v after they registered", took)

	if _, err := alice.Send(bg, "bob", "Please run the integration tests and report the failures"); err != nil {
		t.Fatal(err)
	}
	attack := `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><b>bold?</b>`
	if _, err := bob.Send(bg, "alice", attack); err != nil {
		t.Fatal(err)
	}
	took = within(t, ctx, 10*time.Second, "both messages with receipts",
		`(() => { const t = document.getElementById("messages").textContent;
		  return t.includes("Please run the integration tests") && t.includes("window.pwned=1") &&
		    document.querySelectorAll("#messages .badge.seen").length === 2; })()`)
	t.Logf("both messages and their receipts shown %v after they were sent", took)

	// Untrusted text stays text.
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.pwned)`))
	if err != nil {
		t.Fatal(err)
	}
	tags, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#messages script, #messages img, #messages b").length`))
	if err != nil {
		t.Fatal(err)
	}
	if pwned != "undefined" || tags != 0 {
		t.Fatalf("a message body was rendered as HTML: window.pwned=%s, %d script/img/b elements in the flow", pwned, tags)
	}
	if got := text(t, ctx, "#messages li:last-child .body"); got != attack {
		t.Errorf("the message shows %q, want its text %q", got, attack)
	}

	// The human sends from the page.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("send-to"), "bob"),
		chromedp.SendKeys(chromedp.ID("send-body"), "Ship it when green"),
		chromedp.Click(chromedp.ID("send-button")),
	); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for found := false; !found; {
		select {
		case env := <-bobGot:
			found = env.From == "human" && env.Body == "Ship it when green"
		case <-deadline:
			t.Fatal("bob's inbox did not get the page's message within 10s")
		}
	}
	within(t, ctx, 5*time.Second, "the sent message", `document.getElementById("messages").textContent.includes("human → bob")`)

	// A memory saved by an agent shows up; a search finds it.
	mc := memory.NewClient(alice.Conn(), memory.DefaultSubjectPrefix)
	if _, _, err := mc.Save(bg, memory.Memory{Text: "This project uses Prisma for database access", Author: "alice", Workspace: "default"}); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "the memory change", `document.getElementById("memory-changes").textContent.includes("Prisma")`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("memory-query"), "prisma"),
		chromedp.Click(chromedp.ID("memory-search-button")),
	); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "the search results", `document.getElementById("memory-results").textContent.includes("database access")`)

	// Selecting an agent shows its live screen.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#agents li[data-name="bob"]`))); err != nil {
		t.Fatal(err)
	}
	screen := "╭─────────────────────────────╮\n│ > run the integration tests │\n╰─────────────────────────────╯\n● Running 42 tests… 3 failed"
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = bob.PublishScreen(bus.Screen{Cols: 80, Rows: 24, Text: screen})
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	within(t, ctx, 5*time.Second, "bob's screen", `(document.getElementById("screen")||{}).textContent === `+jsString(screen))
	close(stop)
	<-done

	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	saveArtifact(t, "dashboard.png", png)

	// The dashboard restarts (with its hub, say): the page reconnects by
	// itself, gets a fresh snapshot (another epoch) and goes on live.
	addr := strings.TrimSuffix(strings.TrimPrefix(e.d.URL(), "http://"), "/")
	e.d.Close()
	within(t, ctx, 5*time.Second, "the lost connection", `document.getElementById("conn").textContent !== "live"`)
	d2, err := dashboard.New(dashboard.Options{URL: e.hub.URL(), Token: e.hub.Token(), Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d2.Close() })
	within(t, ctx, 10*time.Second, "the page live again with the history",
		`document.getElementById("conn").textContent === "live" && document.querySelectorAll("#messages li").length === 3 &&
		 document.querySelectorAll("#agents li").length === 2`)
	if _, err := alice.Send(bg, "bob", "after the restart"); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "a message after the restart", `document.getElementById("messages").textContent.includes("after the restart")`)
}

func jsString(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
	return `"` + b + `"`
}

// saveArtifact writes data to the test's temporary folder and, when
// RELAY_ARTIFACTS names a folder, there too.
func saveArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dirs := []string{t.TempDir()}
	if d := os.Getenv("RELAY_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved %s", p)
	}
}
