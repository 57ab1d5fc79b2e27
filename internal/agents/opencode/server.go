package opencode

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayhq/relay/internal/agents"
)

// The variables OpenCode's server takes its basic-auth credentials from
// (OpenCode 1.18: the user is "opencode" unless set).
const (
	PasswordEnv = "OPENCODE_SERVER_PASSWORD"
	UsernameEnv = "OPENCODE_SERVER_USERNAME"
	defaultUser = "opencode"
)

// ErrNoSession means OpenCode has stored no session of the folder yet (it
// makes one with the first prompt): nothing to post to.
var ErrNoSession = errors.New("no OpenCode session to post to yet")

// ErrRefused means OpenCode's server answered a prompt with an error
// status: it did not take the prompt.
var ErrRefused = errors.New("OpenCode's server refused the prompt")

// Server posts prompts to the session an OpenCode TUI runs, through the
// HTTP server the TUI starts with --port (POST
// /session/ID/prompt_async, answered 204 once the prompt is accepted and
// its turn forked). Each prompt carries message and part ids of relay's
// making, in OpenCode's own format, so that a post whose answer was lost
// is asked again under the same ids: OpenCode stores a message and a part
// by id (an upsert), so the model sees it once. It is safe for concurrent
// use.
type Server struct {
	URL      string // http://127.0.0.1:PORT
	User     string // "" means "opencode"
	Password string
	// Session returns the id of the session to post to, "" while there
	// is none.
	Session func() string
	// Client is the HTTP client; nil means one with no proxy.
	Client *http.Client
	// AttemptTimeout bounds one post (20 s when zero); Attempts is how
	// often a post without an answer is made (3 when zero); Backoff is
	// how long Direct says no after a failure (30 s when zero).
	AttemptTimeout time.Duration
	Attempts       int
	Backoff        time.Duration

	mu        sync.Mutex
	downUntil time.Time
	lastMS    int64 // for ids: the millisecond of the last one
	counter   int64 // and how many were made in it
}

// Direct reports whether a prompt can be posted now: a session is known
// and no failure is recent.
func (s *Server) Direct() bool {
	if s.Session == nil || s.Session() == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !time.Now().Before(s.downUntil)
}

// promptBody is what prompt_async takes.
type promptBody struct {
	MessageID string     `json:"messageID"`
	Parts     []textPart `json:"parts"`
}

type textPart struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Text string `json:"text"`
}

// Deliver posts text as one prompt to the session (agents.Deliverer).
func (s *Server) Deliver(ctx context.Context, text string) error {
	sid := ""
	if s.Session != nil {
		sid = s.Session()
	}
	if sid == "" {
		return ErrNoSession
	}
	body, err := json.Marshal(promptBody{
		MessageID: s.newID("msg"),
		Parts:     []textPart{{ID: s.newID("prt"), Type: "text", Text: text}},
	})
	if err != nil {
		return fmt.Errorf("opencode prompt: %w", err)
	}
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	for try := 1; ; try++ {
		sent, err := s.post(ctx, sid, body)
		if err == nil {
			return nil
		}
		if !sent || try == attempts || ctx.Err() != nil {
			// Not sent, refused, or no answer however often asked.
			s.down()
			return err
		}
		// Sent, but no answer: it may have landed. The same ids again.
		select {
		case <-ctx.Done():
			s.down()
			return ctx.Err()
		case <-time.After(time.Duration(try) * 200 * time.Millisecond):
		}
	}
}

// post makes one post; sent is false when the request surely never
// reached OpenCode (it could not connect) or OpenCode answered it.
func (s *Server) post(ctx context.Context, sid string, body []byte) (sent bool, err error) {
	timeout := s.AttemptTimeout
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := s.URL + "/session/" + url.PathEscape(sid) + "/prompt_async"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("opencode prompt: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	user := s.User
	if user == "" {
		user = defaultUser
	}
	req.SetBasicAuth(user, s.Password)
	resp, err := s.client().Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return false, fmt.Errorf("opencode prompt: %w", err)
		}
		return true, fmt.Errorf("opencode prompt: no answer: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("%w: %s %s", ErrRefused, resp.Status, bytes.TrimSpace(msg))
	}
	return false, nil
}

func (s *Server) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
}

// down makes Direct say no for the back-off: typing takes over.
func (s *Server) down() {
	b := s.Backoff
	if b <= 0 {
		b = 30 * time.Second
	}
	s.mu.Lock()
	s.downUntil = time.Now().Add(b)
	s.mu.Unlock()
}

// newID makes an id in OpenCode's ascending format: the prefix, "_", 12
// hex digits of milliseconds×4096 plus a counter (its low 48 bits), 14
// base62 characters.
// OpenCode orders a session's messages by id, so it must be of now.
func (s *Server) newID(prefix string) string {
	ms := time.Now().UnixMilli()
	s.mu.Lock()
	if ms != s.lastMS {
		s.lastMS, s.counter = ms, 0
	}
	s.counter++
	n := uint64(ms)*4096 + uint64(s.counter)
	s.mu.Unlock()
	var t [6]byte
	for i := range t {
		t[i] = byte(n >> (40 - 8*i))
	}
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var r [14]byte
	_, _ = rand.Read(r[:])
	for i := range r {
		r[i] = base62[int(r[i])%62]
	}
	return prefix + "_" + hex.EncodeToString(t[:]) + string(r[:])
}

// serverSetup returns the arguments and environment that start OpenCode's
// server on a free loopback port with a password of this session, and
// the Server that posts to it; nil when relay leaves the server alone:
// the user chose its port or host, or runs a subcommand (opencode run,
// serve, …), whose options differ. A password the user set is used, not
// replaced. The password goes in the child's environment only (readable
// by the same user alone), never on its command line, never logged.
func serverSetup(l agents.Launch) (args, env []string, srv *Server, err error) {
	if hasArg(l.Args, "--port", "--hostname", "--mdns") || subcommand(l.Args, l.Dir) {
		return nil, nil, nil, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opencode server port: %w", err)
	}
	srv = &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), User: lookup(l.Env, UsernameEnv), Password: lookup(l.Env, PasswordEnv)}
	if srv.Password == "" {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, nil, nil, fmt.Errorf("opencode server password: %w", err)
		}
		srv.Password = hex.EncodeToString(b[:])
		env = []string{PasswordEnv + "=" + srv.Password}
	}
	return []string{"--port", strconv.Itoa(port)}, env, srv, nil
}

// freePort is a loopback port free now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// hasArg reports whether args hold one of the flags (alone or as
// flag=value) before a "--".
func hasArg(args []string, flags ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, f := range flags {
			if a == f || len(a) > len(f) && a[:len(f)+1] == f+"=" {
				return true
			}
		}
	}
	return false
}

// subcommand reports whether the first argument names a subcommand, not
// the project folder the TUI opens (opencode [project]).
func subcommand(args []string, dir string) bool {
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		return false
	}
	p := args[0]
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	return err != nil || !fi.IsDir()
}

// direct is the database source with OpenCode's server beside it: the
// session delivers through the server (agents.Deliverer).
type direct struct {
	agents.Source
	*Server
	reader *atomic.Pointer[DBReader] // the follower's, nil until it opened the database
}

var _ agents.Answering = (*direct)(nil)

// Answering is the database's (DBReader.Answering); false before it is read.
func (d *direct) Answering() bool {
	rd := d.reader.Load()
	return rd != nil && rd.Answering()
}

// HumanPromptSince is the database's (DBReader.HumanPromptSince).
func (d *direct) HumanPromptSince(t time.Time) bool {
	rd := d.reader.Load()
	return rd != nil && rd.HumanPromptSince(t)
}
