package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hookrpc"
)

// hookEnv is an Env for `relay hook` with stdin and RELAY_HOOK_SOCKET.
func hookEnv(stdin, socket string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == hookrpc.SocketEnv {
				return socket
			}
			return ""
		},
	}, &out, &errb
}

// serveHooks starts a hook server answering with h until the test ends.
func serveHooks(t *testing.T, h hookrpc.Handler) string {
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
		<-done
	})
	return s.Path()
}

// Without a wrapper (no variable, or a socket that is gone) relay hook
// prints nothing and exits 0 at once.
func TestHookNoWrapper(t *testing.T) {
	t.Parallel()
	for _, socket := range []string{"", filepath.Join(t.TempDir(), "gone.sock")} {
		env, out, errb := hookEnv(`{"hook_event_name":"Stop"}`, socket)
		start := time.Now()
		code := Main([]string{"hook", "Stop"}, env)
		if d := time.Since(start); d > time.Second {
			t.Errorf("socket %q: took %v", socket, d)
		}
		if code != 0 || out.Len() != 0 || errb.Len() != 0 {
			t.Errorf("socket %q: exit %d, stdout %q, stderr %q; want 0 and nothing", socket, code, out, errb)
		}
	}
}

func TestHookRelays(t *testing.T) {
	t.Parallel()
	got := make(chan hookrpc.Request, 1)
	path := serveHooks(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		got <- req
		if req.Event == "UserPromptSubmit" {
			return hookrpc.Response{ExitCode: 2}
		}
		return hookrpc.Response{Stdout: `{"decision":"block","reason":"run the tests"}`}
	})
	payload := `{"hook_event_name":"Stop","stop_hook_active":false}`
	env, out, _ := hookEnv(payload, path)
	if code := Main([]string{"hook", "Stop"}, env); code != 0 {
		t.Errorf("exit %d", code)
	}
	if out.String() != `{"decision":"block","reason":"run the tests"}` {
		t.Errorf("stdout %q", out)
	}
	req := <-got
	if req.Event != "Stop" || string(req.Payload) != payload {
		t.Errorf("wrapper got %q %s", req.Event, req.Payload)
	}
	env, out, _ = hookEnv(`{}`, path)
	if code := Main([]string{"hook", "UserPromptSubmit"}, env); code != 2 || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	<-got
}

// A wrapper that does not answer in time: relay hook gives up at its limit
// and exits 0 silently.
func TestHookSlowWrapper(t *testing.T) {
	t.Parallel()
	path := serveHooks(t, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		<-ctx.Done()
		return hookrpc.Response{Stdout: "too late", ExitCode: 2}
	})
	env, out, errb := hookEnv(`{}`, path)
	start := time.Now()
	code := Main([]string{"hook", "PostToolUse"}, env)
	d := time.Since(start)
	if code != 0 || out.Len() != 0 || errb.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and nothing", code, out, errb)
	}
	if d < hookrpc.Timeout-100*time.Millisecond || d > hookrpc.Timeout+time.Second {
		t.Errorf("gave up after %v, want about %v", d, hookrpc.Timeout)
	}
}

func TestHookUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"hook"}, {"hook", "Stop", "extra"}, {"hook", "--bogus"}} {
		env, _, errb := hookEnv("", "")
		if code := Main(args, env); code != ExitUsage || !strings.Contains(errb.String(), "hook event") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb)
		}
	}
}
