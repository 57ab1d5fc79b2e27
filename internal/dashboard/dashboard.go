// Package dashboard serves relay's live dashboard: a web page and a
// websocket feed that show a hub's agents (state, CLI, pending messages,
// skipped output), every message with its delivery receipts, memory changes
// and, for a selected agent, its screen as text; a human can send messages
// and search memory from it.
//
// The server is a NATS client of the hub like any other (package bus), not
// an agent: it never registers. The page is plain HTML, CSS and one small
// script embedded in the binary; it renders every text with textContent,
// never as HTML, because messages are untrusted.
//
// Security: the page and the websocket need the hub's token, given once in
// the URL (/?token=…) and then kept in an HttpOnly, SameSite=Strict cookie
// (derived from the token, not the token itself); the websocket refuses a
// browser Origin other than its own host; the server binds loopback unless
// told otherwise. docs/dashboard.md is the user's guide and
// docs/protocol.md describes the websocket protocol.
package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/memory"
)

//go:embed static
var static embed.FS

// ErrNotLoopback is returned by New for an address beyond loopback without
// TLS or Options.AllowRemote: the token would cross the network in clear.
var ErrNotLoopback = errors.New("dashboard address is not loopback")

// CookieName is the cookie that holds the dashboard's session.
const CookieName = "relay_dashboard"

// Options configure New. URL and Token are required; the zero value of
// every other field means its default, filled in by fill.
type Options struct {
	// URL and Token reach the hub (bus.Options); the token also opens the
	// page. TLSCA or TLSPin verifies a TLS hub (TLSPin: the dashboard's
	// own hub, hub.Endpoint.TLSPin).
	URL, Token, TLSCA, TLSPin string
	// Addr is the host:port to serve on; empty means 127.0.0.1 with
	// PreferPort if it is free, else a random port.
	Addr string
	// PreferPort is tried when Addr is empty (the port of the last run).
	PreferPort int
	// TLSCert and TLSKey make the dashboard serve HTTPS; with them it may
	// listen beyond loopback.
	TLSCert, TLSKey string
	// AllowRemote lets plain HTTP listen beyond loopback (behind a TLS proxy
	// or an SSH tunnel, say). Without it, or TLS, New refuses.
	AllowRemote bool
	// Workspace is the one the page opens; empty means bus.DefaultWorkspace.
	Workspace string
	// Human is the sender name of what the page sends; empty means "human".
	Human string
	// MemoryPrefix is the memory service's subject prefix; empty means
	// memory.DefaultSubjectPrefix.
	MemoryPrefix string
	// Poll is how often agents are listed besides when their presence
	// changes or a message moves (to catch agents whose heartbeats stopped);
	// zero means 1 s.
	Poll time.Duration
	// Ring is how many events of a workspace a reconnecting client can
	// resume from; zero means 4096. Keep is how many messages a snapshot
	// shows; zero means 500.
	Ring, Keep int
	// MaxWorkspaces bounds the workspaces followed at once; zero means 16.
	MaxWorkspaces int
	// Logger receives the server's problems; nil discards them.
	Logger *slog.Logger
}

func (o *Options) fill() error {
	if o.URL == "" || o.Token == "" {
		return errors.New("dashboard: the hub's URL and token are required")
	}
	if o.Workspace == "" {
		o.Workspace = bus.DefaultWorkspace
	}
	if o.Human == "" {
		o.Human = "human"
	}
	if err := bus.ValidName("workspace", o.Workspace); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if err := bus.ValidName("sender", o.Human); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if o.MemoryPrefix == "" {
		o.MemoryPrefix = memory.DefaultSubjectPrefix
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.Ring == 0 {
		o.Ring = 4096
	}
	if o.Keep == 0 {
		o.Keep = 500
	}
	if o.MaxWorkspaces == 0 {
		o.MaxWorkspaces = 16
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return errors.New("dashboard: TLS needs both a certificate and a key file")
	}
	return nil
}

// Server is a running dashboard. Close it.
type Server struct {
	opts   Options
	ln     net.Listener
	http   *http.Server
	url    string
	epoch  string
	cookie string
	mem    *memory.Client
	mw     *memWatch
	served chan struct{}
	closed sync.Once
	cerr   error

	ctx    context.Context
	cancel context.CancelFunc
	conns  sync.WaitGroup

	mu    sync.Mutex
	feeds map[string]*feed
}

// New connects to the hub, starts following Options.Workspace and serves
// the dashboard in the background until Close.
func New(o Options) (*Server, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	ln, scheme, err := listen(&o)
	if err != nil {
		return nil, err
	}
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	mac := hmac.New(sha256.New, []byte(o.Token))
	mac.Write([]byte("relay dashboard cookie"))
	s := &Server{
		opts: o, ln: ln, epoch: hex.EncodeToString(raw), cookie: hex.EncodeToString(mac.Sum(nil)),
		feeds: map[string]*feed{}, served: make(chan struct{}),
	}
	s.url = scheme + "://" + urlHost(ln.Addr().(*net.TCPAddr), o.Addr) + "/"
	s.ctx, s.cancel = context.WithCancel(context.Background())
	f, err := s.feed(s.ctx, o.Workspace)
	if err != nil {
		ln.Close()
		return nil, err
	}
	nc := f.c.Conn()
	s.mem = memory.NewClient(nc, o.MemoryPrefix)
	if s.mw, err = watchMemory(nc, o.MemoryPrefix, s.onMemory); err != nil {
		s.closeFeeds()
		ln.Close()
		return nil, fmt.Errorf("dashboard: watch memory: %w", err)
	}
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug)}
	go func() {
		defer close(s.served)
		var err error
		if o.TLSCert != "" {
			err = s.http.ServeTLS(ln, o.TLSCert, o.TLSKey)
		} else {
			err = s.http.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			o.Logger.Error("dashboard stopped serving", "err", err)
		}
	}()
	return s, nil
}

// CheckAddr reports whether addr (host:port) may serve the dashboard:
// loopback, or beyond it with TLS or allowRemote. Callers use it to refuse
// a flag before starting anything; New applies the same rule.
func CheckAddr(addr string, tls, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard address %q: want HOST:PORT (e.g. 127.0.0.1:8080): %w", addr, err)
	}
	if !isLoopback(host) && !tls && !allowRemote {
		return fmt.Errorf("%w: %s would send the hub's token in clear text beyond this machine; "+
			"listen on 127.0.0.1, give a TLS certificate and key, or allow it explicitly", ErrNotLoopback, addr)
	}
	return nil
}

func listen(o *Options) (net.Listener, string, error) {
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
	}
	if o.Addr == "" {
		if o.PreferPort > 0 {
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.PreferPort))); err == nil {
				return ln, scheme, nil
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", fmt.Errorf("dashboard: listen: %w", err)
		}
		return ln, scheme, nil
	}
	if err := CheckAddr(o.Addr, o.TLSCert != "", o.AllowRemote); err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("dashboard: listen on %s: %w", o.Addr, err)
	}
	return ln, scheme, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// urlHost is the host:port a browser on this machine uses.
func urlHost(a *net.TCPAddr, asked string) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	if h, _, err := net.SplitHostPort(asked); err == nil && h == "localhost" {
		host = h
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// URL is the dashboard's address without the token.
func (s *Server) URL() string { return s.url }

// TokenURL is the address that opens the dashboard: URL with ?token=.
func (s *Server) TokenURL() string { return s.url + "?token=" + url.QueryEscape(s.opts.Token) }

// Close stops serving, closes the websockets and the hub connections. It
// is safe to call more than once.
func (s *Server) Close() error {
	s.closed.Do(func() {
		s.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.cerr = s.http.Shutdown(ctx)
		<-s.served
		s.conns.Wait()
		s.mw.stop()
		s.closeFeeds()
	})
	return s.cerr
}

func (s *Server) closeFeeds() {
	s.mu.Lock()
	fs := make([]*feed, 0, len(s.feeds))
	for _, f := range s.feeds {
		fs = append(fs, f)
	}
	s.feeds = map[string]*feed{}
	s.mu.Unlock()
	for _, f := range fs {
		f.stop()
	}
}

// feed returns the feed of workspace ws, starting it the first time.
func (s *Server) feed(ctx context.Context, ws string) (*feed, error) {
	if err := bus.ValidName("workspace", ws); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.feeds[ws]; ok {
		return f, nil
	}
	if len(s.feeds) >= s.opts.MaxWorkspaces {
		return nil, fmt.Errorf("the dashboard follows %d workspaces already (the most it will)", len(s.feeds))
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := bus.Connect(cctx, bus.Options{
		URL: s.opts.URL, Token: s.opts.Token, TLSCA: s.opts.TLSCA, TLSPin: s.opts.TLSPin, Workspace: ws, Name: s.opts.Human,
		Logger: s.opts.Logger.With("from", "dashboard"),
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	f := newFeed(c, &s.opts)
	if err := f.start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("dashboard: follow workspace %s: %w", ws, err)
	}
	s.feeds[ws] = f
	return f, nil
}

// onMemory passes a memory change to the feeds it concerns: its
// workspace's, or every one for a memory without a workspace.
func (s *Server) onMemory(op string, m memory.Memory, created bool) {
	s.mu.Lock()
	var fs []*feed
	for ws, f := range s.feeds {
		if m.Workspace == "" || m.Workspace == ws {
			fs = append(fs, f)
		}
	}
	s.mu.Unlock()
	for _, f := range fs {
		mm := m
		f.addMemory(Frame{Type: TypeMemory, Op: op, Memory: &mm, Created: created})
	}
}

// workspaces lists the workspaces that have a stream on the hub.
func (s *Server) workspaces(ctx context.Context, f *feed) []string {
	js, err := jetstream.New(f.c.Conn())
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	names := js.StreamNames(ctx)
	var out []string
	for n := range names.Name() {
		if ws, ok := cutPrefix(n, "RELAY_"); ok && bus.ValidName("workspace", ws) == nil {
			out = append(out, ws)
		}
	}
	slices.Sort(out)
	return out
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// routes is the HTTP side: the page, its assets and the websocket, all
// behind the token.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(static, "static")
	files := http.FileServerFS(assets)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if tok := r.URL.Query().Get("token"); tok != "" {
			s.login(w, r, tok)
			return
		}
		if !s.authorized(r) {
			unauthorized(w)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, assets, "index.html")
	})
	mux.HandleFunc("GET /static/", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			unauthorized(w)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = r.URL.Path[len("/static"):]
		if r2.URL.Path == "/index.html" {
			http.NotFound(w, r)
			return
		}
		serveNoCache(files, w, r2)
	})
	mux.HandleFunc("GET /ws", s.serveWS)
	return securityHeaders(mux)
}

func serveNoCache(h http.Handler, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	h.ServeHTTP(w, r)
}

func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

// login checks the token given in the URL, sets the session cookie and
// redirects to the same page without the token.
func (s *Server) login(w http.ResponseWriter, r *http.Request, tok string) {
	if !s.tokenOK(tok) {
		unauthorized(w)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: s.cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.opts.TLSCert != "",
	})
	q := r.URL.Query()
	q.Del("token")
	target := "/"
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (s *Server) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1
}

// authorized accepts the session cookie, the token in the query (for a
// websocket client that is not a browser) or as a bearer token.
func (s *Server) authorized(r *http.Request) bool {
	if c, err := r.Cookie(CookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.cookie)) == 1 {
		return true
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		return s.tokenOK(tok)
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && h[:7] == "Bearer " {
		return s.tokenOK(h[7:])
	}
	return false
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, "relay dashboard: missing or wrong token. Open the address that `relay dashboard` prints (it carries the token once).\n")
}
