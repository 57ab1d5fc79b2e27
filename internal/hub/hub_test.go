package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestMain doubles as a stand-in for `relay up` when StartDetached runs the
// test binary with RELAY_HUB_TEST_CHILD=1: it runs a hub in the foreground
// until SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("RELAY_HUB_TEST_CHILD") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		h, err := hub.Start(ctx, hub.Options{Home: os.Getenv("RELAY_HOME")})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		<-ctx.Done()
		h.Shutdown()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func start(t *testing.T, o hub.Options) *hub.Hub {
	t.Helper()
	h, err := hub.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	return h
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestStartDiscoverShutdown(t *testing.T) {
	home := testutil.Home(t)
	h := start(t, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if !strings.HasPrefix(h.URL(), "nats://127.0.0.1:") || len(h.Token()) != 64 {
		t.Fatalf("hub at %q with token %q", h.URL(), h.Token())
	}
	ep, err := hub.Discover(home)
	if err != nil || ep != h.Endpoint() || ep.URL != h.URL() || ep.Token != h.Token() || ep.TLSPin != "" {
		t.Fatalf("Discover = %+v, %v; want the running hub", ep, err)
	}
	for _, f := range []string{"token", "hub.json"} {
		if m := mode(t, filepath.Join(hub.Dir(home), f)); m != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, m)
		}
	}
	if _, err := nats.Connect(ep.URL); err == nil {
		t.Error("connected without the token")
	}
	nc, err := nats.Connect(ep.URL, nats.Token(ep.Token))
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	nc.Close()
	if _, err := hub.Start(context.Background(), hub.Options{Home: home}); !errors.Is(err, hub.ErrHubRunning) {
		t.Errorf("second hub on the same home: %v, want ErrHubRunning", err)
	}
	h.Shutdown()
	h.Shutdown() // twice is fine
	if _, err := hub.Discover(home); !errors.Is(err, hub.ErrNoHub) || !strings.Contains(err.Error(), "was stopped") {
		t.Errorf("Discover after Shutdown: %v, want ErrNoHub (stopped)", err)
	}
	// A restart keeps the token and, when free, the port.
	h2 := start(t, hub.Options{Home: home})
	if h2.URL() != ep.URL || h2.Token() != ep.Token {
		t.Errorf("restarted hub %s %s, want %s with the same token", h2.URL(), h2.Token(), ep.URL)
	}
}

func TestListenAddress(t *testing.T) {
	for _, tc := range []struct{ listen, want string }{
		{"0.0.0.0:0", "not loopback"},
		{":4222", "not loopback"},
		{"192.0.2.1:4222", "not loopback"},
		{"nonsense", "want HOST:PORT"},
		{"127.0.0.1:http", "not a number"},
	} {
		_, err := hub.Start(context.Background(), hub.Options{Home: testutil.Home(t), Listen: tc.listen})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Listen %q: %v, want an error saying %q", tc.listen, err, tc.want)
		}
	}
	if _, err := hub.Start(context.Background(), hub.Options{Home: testutil.Home(t), Listen: "0.0.0.0:0"}); !errors.Is(err, hub.ErrNotLoopback) {
		t.Errorf("0.0.0.0 without TLS: %v, want ErrNotLoopback", err)
	}
	h := start(t, hub.Options{Home: testutil.Home(t), Listen: "localhost:0"})
	if h.URL() == "" {
		t.Error("no URL")
	}
}

func writeState(t *testing.T, home string, st map[string]any) {
	t.Helper()
	if err := os.MkdirAll(hub.Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(hub.Dir(home), "hub.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverStale(t *testing.T) {
	if _, err := hub.Discover(testutil.Home(t)); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Discover with no record: %v, want ErrNoHub", err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	home := testutil.Home(t)
	writeState(t, home, map[string]any{"url": "nats://127.0.0.1:1", "port": 1, "pid": gone.Process.Pid})
	if _, err := hub.Discover(home); !errors.Is(err, hub.ErrNoHub) || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("Discover with a dead pid: %v, want ErrNoHub (gone)", err)
	}
	writeState(t, home, map[string]any{"url": "nats://127.0.0.1:1", "port": 1, "pid": os.Getpid()})
	if _, err := hub.Discover(home); !errors.Is(err, hub.ErrNoHub) || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("Discover with a dead port: %v, want ErrNoHub (does not answer)", err)
	}
	if _, err := hub.Stop(context.Background(), testutil.Home(t)); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Stop with no hub: %v, want ErrNoHub", err)
	}
}

func TestEnsureRunningStartsOneDetachedHub(t *testing.T) {
	t.Setenv("RELAY_HUB_TEST_CHILD", "1") // the detached child runs TestMain's hub
	home := testutil.Home(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	urls := make([]string, 3)
	var wg sync.WaitGroup
	for i := range urls {
		wg.Go(func() {
			ep, err := hub.EnsureRunning(ctx, home, exe)
			if err != nil {
				t.Error(err)
			}
			urls[i] = ep.URL
		})
	}
	wg.Wait()
	if urls[0] == "" || urls[0] != urls[1] || urls[1] != urls[2] {
		t.Fatalf("three EnsureRunning at once gave %q, want one hub", urls)
	}
	t.Cleanup(func() { _, _ = hub.Stop(context.Background(), home) })
	if _, err := os.Stat(filepath.Join(hub.Dir(home), "hub.log")); err != nil {
		t.Errorf("detached hub has no log: %v", err)
	}
	url, err := hub.Stop(ctx, home)
	if err != nil || url != urls[0] {
		t.Fatalf("Stop = %q, %v", url, err)
	}
	if _, err := hub.Discover(home); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Discover after Stop: %v, want ErrNoHub", err)
	}
	if _, err := hub.Stop(ctx, home); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("second Stop: %v, want ErrNoHub", err)
	}
}

func TestStartDetachedReportsAFailingChild(t *testing.T) {
	home := testutil.Home(t)
	_, err := hub.StartDetached(context.Background(), hub.DetachOptions{Home: home, Executable: "/bin/false"})
	if err == nil || !strings.Contains(err.Error(), "hub.log") {
		t.Errorf("StartDetached of a child that exits: %v, want an error pointing at hub.log", err)
	}
}
