package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
)

// fakeOpenCode is OpenCode's server as far as prompt_async goes: it checks
// the basic-auth password, records each post and answers as told.
type fakeOpenCode struct {
	password string
	// answer answers post n (from 1); nil answers 204.
	answer func(n int, w http.ResponseWriter) bool

	mu    sync.Mutex
	posts []post
}

type post struct {
	path, user, pass, contentType string
	body                          promptBody
}

func (f *fakeOpenCode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, pass, _ := r.BasicAuth()
	var b promptBody
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &b)
	f.mu.Lock()
	f.posts = append(f.posts, post{path: r.Method + " " + r.URL.Path, user: user, pass: pass, contentType: r.Header.Get("Content-Type"), body: b})
	n := len(f.posts)
	f.mu.Unlock()
	if user != "opencode" || pass != f.password {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if f.answer != nil && f.answer(n, w) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeOpenCode) got() []post {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]post(nil), f.posts...)
}

// dropConnection closes the connection without an answer, as a server
// that died after it read the request.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// TestServerDeliver posts to a real HTTP server standing in for
// OpenCode's: the request's shape and credentials, what counts as taken,
// and that a post whose answer was lost is asked again under the same ids
// (OpenCode stores by id: the model sees it once), never with new ones.
func TestServerDeliver(t *testing.T) {
	const text = "[relay] Message from agent Alice (id m1).\n│ hello"
	closed := func() string { // a loopback port nobody listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String()
	}
	for _, tc := range []struct {
		name     string
		password string // the server's; relay's is "secret"
		session  string
		answer   func(n int, w http.ResponseWriter) bool
		down     bool // the server is not there
		wantErr  error
		wantAny  bool // any error
		posts    int
		direct   bool // Direct after
	}{
		{name: "accepted", password: "secret", session: "ses_1", posts: 1, direct: true},
		{name: "refused", password: "secret", session: "ses_1", answer: func(_ int, w http.ResponseWriter) bool {
			http.Error(w, "boom", http.StatusInternalServerError)
			return true
		}, wantErr: ErrRefused, posts: 1},
		{name: "wrong password", password: "other", session: "ses_1", wantErr: ErrRefused, posts: 1},
		{name: "session gone", password: "secret", session: "ses_1", answer: func(_ int, w http.ResponseWriter) bool {
			http.NotFound(w, nil)
			return true
		}, wantErr: ErrRefused, posts: 1},
		{name: "answer lost once", password: "secret", session: "ses_1", answer: func(n int, w http.ResponseWriter) bool {
			if n == 1 {
				dropConnection(w)
				return true
			}
			return false
		}, posts: 2, direct: true},
		{name: "answer lost every time", password: "secret", session: "ses_1", answer: func(_ int, w http.ResponseWriter) bool {
			dropConnection(w)
			return true
		}, wantAny: true, posts: 3},
		{name: "no server", session: "ses_1", down: true, wantAny: true},
		{name: "no session yet", password: "secret", wantErr: ErrNoSession},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeOpenCode{password: tc.password, answer: tc.answer}
			url := closed()
			if !tc.down {
				ts := httptest.NewServer(f)
				t.Cleanup(ts.Close)
				url = ts.URL
			}
			s := &Server{URL: url, Password: "secret", Session: func() string { return tc.session }, AttemptTimeout: 5 * time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := s.Deliver(ctx, text)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			case tc.wantAny && err == nil:
				t.Fatal("no error")
			case tc.wantErr == nil && !tc.wantAny && err != nil:
				t.Fatalf("err %v", err)
			}
			if got := s.Direct(); got != tc.direct {
				t.Errorf("Direct after: %v, want %v", got, tc.direct)
			}
			posts := f.got()
			if len(posts) != tc.posts {
				t.Fatalf("%d posts, want %d", len(posts), tc.posts)
			}
			for _, p := range posts {
				if p.path != "POST /session/ses_1/prompt_async" || p.user != "opencode" || p.pass != "secret" || p.contentType != "application/json" {
					t.Errorf("post %+v", p)
				}
				if len(p.body.Parts) != 1 || p.body.Parts[0].Type != "text" || p.body.Parts[0].Text != text {
					t.Errorf("parts %+v", p.body.Parts)
				}
				if p.body.MessageID != posts[0].body.MessageID || p.body.Parts[0].ID != posts[0].body.Parts[0].ID {
					t.Errorf("asked again under other ids: %+v, first %+v", p.body, posts[0].body)
				}
			}
			if len(posts) > 0 {
				if !idPattern("msg").MatchString(posts[0].body.MessageID) || !idPattern("prt").MatchString(posts[0].body.Parts[0].ID) {
					t.Errorf("ids not in OpenCode's format: %+v", posts[0].body)
				}
			}
		})
	}
}

func idPattern(prefix string) *regexp.Regexp {
	return regexp.MustCompile(`^` + prefix + `_[0-9a-f]{12}[0-9A-Za-z]{14}$`)
}

// TestNewIDAscends: OpenCode orders a session's messages by id, whose first
// 12 hex digits are the low 48 bits of milliseconds×4096 plus a counter:
// relay's ids must be of now and grow, also within one millisecond.
func TestNewIDAscends(t *testing.T) {
	s := &Server{}
	before := time.Now().UnixMilli()
	var last string
	for i := range 5000 {
		id := s.newID("msg")
		if !idPattern("msg").MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if id[:16] <= last {
			t.Fatalf("id %d %q not after %q", i, id, last)
		}
		last = id[:16]
	}
	n, err := strconv.ParseUint(last[4:16], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	// Six bytes: the low 48 bits, as OpenCode's own ids.
	low := func(ms int64) uint64 { return uint64(ms) * 4096 & (1<<48 - 1) }
	if n < low(before) || n > low(time.Now().UnixMilli())+4095 {
		t.Errorf("id's time %x not between %x and now", n, low(before))
	}
}

// TestServerSetup: relay starts OpenCode's server on a loopback port of
// its choosing with a password of the session, in the environment only;
// it leaves the server alone when the user set its port or host or runs
// a subcommand, and uses a password the user set.
func TestServerSetup(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		args     []string
		env      []string
		none     bool
		password string // "": a new one
	}{
		{name: "plain"},
		{name: "a project folder", args: []string{dir}},
		{name: "a flag", args: []string{"--model", "mock/mock-model"}},
		{name: "the user's port", args: []string{"--port", "4096"}, none: true},
		{name: "the user's port, one word", args: []string{"--port=4096"}, none: true},
		{name: "the user's host", args: []string{"--hostname", "0.0.0.0"}, none: true},
		{name: "a subcommand", args: []string{"run", "hello"}, none: true},
		{name: "the user's password", env: []string{PasswordEnv + "=mine"}, password: "mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, env, srv, err := serverSetup(agents.Launch{Args: tc.args, Env: tc.env, Dir: dir, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if srv != nil || args != nil || env != nil {
					t.Fatalf("set up a server: %v %v", args, env)
				}
				return
			}
			if srv == nil || len(args) != 2 || args[0] != "--port" || srv.URL != "http://127.0.0.1:"+args[1] {
				t.Fatalf("args %q, server %+v", args, srv)
			}
			for _, a := range args {
				if strings.Contains(a, srv.Password) {
					t.Errorf("the password is on the command line: %q", args)
				}
			}
			switch {
			case tc.password != "":
				if srv.Password != tc.password || len(env) != 0 {
					t.Errorf("password %q, env %q; want the user's, no variable", srv.Password, env)
				}
			case len(srv.Password) < 32 || fmt.Sprint(env) != "["+PasswordEnv+"="+srv.Password+"]":
				t.Errorf("password %q, env %q", srv.Password, env)
			}
		})
	}
}
