package hookrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hookrpc"
)

// serve starts a server in a fresh folder answering with h; it stops with
// the test.
func serve(t testing.TB, h hookrpc.Handler) *hookrpc.Server {
	t.Helper()
	s, err := hookrpc.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, h) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	sent := make(chan error, 1)
	var got hookrpc.Request
	s := serve(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		got = req
		return hookrpc.Response{Stdout: `{"decision":"block","reason":"run the tests"}`, ExitCode: 0,
			Sent: func(err error) { sent <- err }}
	})
	payload := json.RawMessage(`{"hook_event_name":"Stop","last_assistant_message":"a\n\\@relay:Nobody\n` + "```" + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := hookrpc.Call(ctx, s.Path(), hookrpc.Request{Event: "Stop", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stdout != `{"decision":"block","reason":"run the tests"}` || resp.ExitCode != 0 {
		t.Errorf("response = %+v", resp)
	}
	if err := <-sent; err != nil {
		t.Errorf("Sent reported %v, want nil", err)
	}
	if got.Event != "Stop" || string(got.Payload) != string(payload) {
		t.Errorf("server got %q %s, want Stop %s", got.Event, got.Payload, payload)
	}
	if got.Deadline.IsZero() {
		t.Error("the client's deadline did not reach the server")
	}
}

func TestSocketIsPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	s, err := hookrpc.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(s.Path()))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket folder mode %v, want 0700", di.Mode().Perm())
	}
	if !strings.HasPrefix(s.Path(), dir+string(filepath.Separator)) {
		t.Errorf("socket %s not under %s", s.Path(), dir)
	}
	s2, err := hookrpc.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Path() == s.Path() {
		t.Errorf("two servers share the path %s", s.Path())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path())); !os.IsNotExist(err) {
		t.Errorf("Close left the socket folder behind: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A folder too deep for a Unix socket path falls back to a private folder
// in the system's temporary folder.
func TestLongPathFallsBack(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	s, err := hookrpc.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Path()) > 107 {
		t.Errorf("socket path is %d bytes: %s", len(s.Path()), s.Path())
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(s.Path())), "relay-") {
		t.Errorf("fallback folder %s is not a relay- temporary folder", s.Path())
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	s := serve(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response { return hookrpc.Response{} })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		path    string
		payload string
		want    string
		is      error
	}{
		{"no socket", filepath.Join(t.TempDir(), "gone.sock"), `{}`, "no such file", nil},
		{"invalid json", s.Path(), `{"a":`, "not valid JSON", nil},
		{"too large", s.Path(), `"` + strings.Repeat("x", hookrpc.MaxPayload) + `"`, "over the 4194304-byte limit", hookrpc.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hookrpc.Call(ctx, tc.path, hookrpc.Request{Event: "Stop", Payload: json.RawMessage(tc.payload)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
	// An empty payload travels as null.
	if _, err := hookrpc.Call(ctx, s.Path(), hookrpc.Request{Event: "Stop"}); err != nil {
		t.Errorf("empty payload: %v", err)
	}
}

// A handler slower than the client's deadline: the client returns at its
// deadline, the handler's context ends before it, and Sent says the
// response was not delivered.
func TestSlowHandler(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	sent := make(chan error, 1)
	handlerCtx := make(chan error, 1)
	s := serve(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		<-ctx.Done()
		handlerCtx <- ctx.Err()
		<-release
		return hookrpc.Response{Stdout: "late", Sent: func(err error) { sent <- err }}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := hookrpc.Call(ctx, s.Path(), hookrpc.Request{Event: "Stop", Payload: json.RawMessage(`{}`)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call error %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Call took %v past its 300 ms deadline", d)
	}
	if err := <-handlerCtx; err == nil {
		t.Error("the handler's context did not end")
	}
	close(release)
	if err := <-sent; err == nil {
		t.Error("Sent reported delivery of a response nobody read")
	}
}

// A hook process that goes away ends the handler's context at once.
func TestClientGoesAway(t *testing.T) {
	t.Parallel()
	sent := make(chan error, 1)
	s := serve(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		<-ctx.Done()
		return hookrpc.Response{Stdout: "x", Sent: func(err error) { sent <- err }}
	})
	conn, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(`{"event":"PostToolUse","payload":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case err := <-sent:
		if err == nil || !strings.Contains(err.Error(), "stopped waiting") {
			t.Errorf("Sent(%v), want the hook process stopped waiting", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never learned the hook process went away")
	}
}

// A malformed request is reported to ErrorLog and answered with nothing.
func TestBadRequest(t *testing.T) {
	t.Parallel()
	s, err := hookrpc.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []error
	s.ErrorLog = func(err error) { mu.Lock(); logged = append(logged, err); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, func(context.Context, hookrpc.Request) hookrpc.Response {
			t.Error("handler called for a bad request")
			return hookrpc.Response{}
		})
	}()
	conn, err := net.Dial("unix", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("not json\n"))
	var b [1]byte
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := conn.Read(b[:]); n != 0 {
		t.Errorf("the server answered a bad request")
	}
	conn.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !strings.Contains(logged[0].Error(), "read hook request") {
		t.Errorf("logged %v, want one read hook request error", logged)
	}
}

// Serve waits for the exchanges in progress when its context ends.
func TestServeStops(t *testing.T) {
	t.Parallel()
	s, err := hookrpc.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, func(context.Context, hookrpc.Request) hookrpc.Response { return hookrpc.Response{} })
	}()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("the socket outlived Serve: %v", err)
	}
}

// BenchmarkCall is one in-process exchange over the socket (the cost of
// the channel alone, without starting `relay hook`).
func BenchmarkCall(b *testing.B) {
	s := serve(b, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		return hookrpc.Response{Stdout: `{}`}
	})
	payload := json.RawMessage(`{"session_id":"s","hook_event_name":"Stop","last_assistant_message":"done"}`)
	ctx := context.Background()
	for b.Loop() {
		if _, err := hookrpc.Call(ctx, s.Path(), hookrpc.Request{Event: "Stop", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLimit(t *testing.T) {
	t.Parallel()
	for ev, want := range map[string]time.Duration{"Stop": hookrpc.StopTimeout, "SubagentStop": hookrpc.StopTimeout,
		"PostToolUse": hookrpc.Timeout, "UserPromptSubmit": hookrpc.Timeout, "": hookrpc.Timeout,
		"PreToolUse": hookrpc.PreToolUseTimeout, "BeforeTool": hookrpc.PreToolUseTimeout, "AfterTool": hookrpc.Timeout} {
		if got := hookrpc.Limit(ev); got != want {
			t.Errorf("Limit(%q) = %v, want %v", ev, got, want)
		}
	}
}
