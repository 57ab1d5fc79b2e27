//go:build !lean

// Package hub runs relay's hub: an embedded NATS server with JetStream file
// storage under RELAY_HOME, listening on loopback and guarded by a generated
// token. It also records where the running hub is (URL, token, pid) so that
// other relay processes on the machine find it with Discover, starts a
// detached hub (StartDetached, EnsureRunning) and stops one (Stop).
//
// The hub knows nothing about messages: package bus is the client side and
// creates the streams it needs on any NATS server, embedded or external.
//
// Files under RELAY_HOME/hub (all 0600, the folder 0700):
//
//	token       the hub's token, generated once and kept across restarts; hub.json
//	            records its SHA-256, and a token file relay did not write is refused
//	hub.json    URL, port and pid of the hub (pid 0 once it stopped), its dashboard's URL,
//	            the SHA-256 of its TLS certificate
//	hub.lock    held by the running hub; a second hub on the same home is refused
//	start.lock  serialises EnsureRunning so two wrappers start one hub
//	hub.log     output of a detached hub
//	agents.json the agents' own credentials, issued when they join and revoked when they
//	            leave; kept across restarts so that a reconnecting agent's still works
//	jetstream/  JetStream storage
//
// The hub trusts its folders and files only when they belong to the user
// running it and no one else can write them (package statedir): a state
// folder prepared by someone else, or a token planted in it, is refused
// with an error (statedir.ErrUnsafe) that names the fix.
package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options configure Start. The zero value (with Home set) runs a hub on
// 127.0.0.1, on the port it had last time or else a random one.
type Options struct {
	// Home is the state folder (RELAY_HOME); required.
	Home string
	// Listen is host:port. Empty means 127.0.0.1 and the port the hub had
	// last time if it is free, else a random one; port 0 means random.
	// A host that is not loopback needs TLSCert and TLSKey.
	Listen string
	// TLSCert and TLSKey are PEM files; with them the hub speaks TLS and may
	// listen beyond loopback.
	TLSCert, TLSKey string
	// Token overrides the stored token (which is generated on first start).
	Token string
	// ServerName names the NATS server; empty means "relay-hub".
	ServerName string
	// Logger receives the NATS server's notices and errors; nil discards them.
	Logger *slog.Logger
	// ReadyTimeout bounds the wait for the server to accept connections;
	// zero means 10 s.
	ReadyTimeout time.Duration
	// MaxStore caps the bytes of the JetStream file store (messages,
	// receipts, presence); zero means DefaultMaxStore. A fixed size, not the
	// free space at start: a store sized from a nearly full disk stayed too
	// small after the disk was freed, and even after a restart. Below it,
	// the hub also keeps a quarter of its disk's free space unused, watching
	// it as it changes (see storeLimit).
	MaxStore int64
	// MaxMemory caps JetStream's memory storage; zero means DefaultMaxMemory.
	MaxMemory int64
	// LeafListen is host:port of the leafnode listener that leaf machines
	// join (leaf.go). Empty means 127.0.0.1 and the port of last time, else
	// a random one. A host that is not loopback needs TLSCert and TLSKey.
	LeafListen string
	// Join makes this hub a leaf node of the team's hub in the ticket; it is
	// kept in join.json, so that later starts on the same home join again.
	Join *Ticket
	// Services starts what the hub serves beside NATS (relay up's memory
	// service) once the server takes connections and before hub.json
	// records the hub, so that whoever finds the hub finds them live. The
	// stop it returns runs first in Shutdown, while the server still runs.
	// An error stops the hub and is Start's.
	Services func(h *Hub) (stop func(), err error)
}

// DefaultMaxStore is the JetStream file store's size when Options.MaxStore
// is zero (relay up --max-store): 1 GiB, about a million average messages.
// A send past it, or onto a full disk, fails with "insufficient resources"
// (bus.ErrHubFull) and works again once messages age out or space is freed,
// without restarting the hub.
const DefaultMaxStore int64 = 1 << 30

// DefaultMaxMemory is JetStream's memory storage size when
// Options.MaxMemory is zero. relay keeps everything on disk; this only
// bounds what a client might create in memory.
const DefaultMaxMemory int64 = 64 << 20

// ErrHubRunning is returned by Start when a hub already runs on the same home.
var ErrHubRunning = errors.New("a hub is already running")

// ErrNotLoopback is returned by Start when asked to listen beyond loopback
// without TLS: the token would cross the network in clear text.
var ErrNotLoopback = errors.New("listen address is not loopback")

// ErrAddressRefused is returned by Start when the system refuses the listen
// address it was given (another program uses the port, or the address is
// not one of this machine's).
var ErrAddressRefused = errors.New("cannot listen on the address")

// Hub is a running embedded NATS server. Stop it with Shutdown.
type Hub struct {
	srv   *server.Server
	url   string
	token string
	home  string
	lock  *os.File
	port  int
	pin   string        // hex SHA-256 of the TLS certificate; "" without TLS
	guard chan struct{} // closed to stop guardDisk
	auth  *auth         // the token and the agents' credentials
	creds *nats.Conn    // answers credential requests

	domain  string   // JetStream domain: DomainTeam, or LeafDomain on a leaf
	leafURL string   // the leafnode listener's URL for tickets; "" on a leaf
	join    *Ticket  // the team's hub this leaf joined; nil on the team's hub
	bridges *bridges // copy streams from the other side's domains

	stopServices func() // stops Options.Services

	mu       sync.Mutex
	st       state // as recorded in hub.json
	lastDash int   // the dashboard port of the previous run
}

func (o *Options) fill() error {
	if o.Home == "" {
		return errors.New("start hub: no state folder (RELAY_HOME)")
	}
	if o.ServerName == "" {
		o.ServerName = "relay-hub"
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	if o.MaxStore == 0 {
		o.MaxStore = DefaultMaxStore
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxStore < 0 || o.MaxMemory < 0 {
		return errors.New("start hub: the store sizes must be positive")
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return errors.New("start hub: TLS needs both a certificate and a key file")
	}
	return nil
}

// listenAddr resolves Options.Listen into a host and a nats-server port
// (-1 for random).
func (o *Options) listenAddr(lastPort int) (string, int, error) {
	if o.Listen == "" {
		if lastPort > 0 && portFree("127.0.0.1", lastPort) {
			return "127.0.0.1", lastPort, nil
		}
		return "127.0.0.1", -1, nil
	}
	host, p, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: want HOST:PORT (e.g. 127.0.0.1:4222): %w", o.Listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", o.Listen, p)
	}
	if port == 0 {
		port = -1
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if !isLoopback(host) && o.TLSCert == "" {
		return "", 0, fmt.Errorf("%w: %s would expose the hub beyond this machine with its token in clear text; "+
			"listen on 127.0.0.1, or give a TLS certificate and key", ErrNotLoopback, o.Listen)
	}
	if port > 0 {
		// Said at once and plainly, rather than as a server that is not
		// ready after ReadyTimeout.
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return "", 0, fmt.Errorf("%w: %s: %w; stop what listens there, or choose another address with --listen", ErrAddressRefused, o.Listen, unwrapOp(err))
		}
		l.Close()
	}
	return host, port, nil
}

// unwrapOp returns the system's reason inside a net.OpError ("address
// already in use"), which names the address again otherwise.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func portFree(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Start runs an embedded NATS server with JetStream and records it in
// Options.Home so that Discover finds it. It returns once the server accepts
// connections.
func Start(ctx context.Context, opts Options) (*Hub, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	dir := Dir(opts.Home)
	if err := ensureDirs(opts.Home); err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	lock, err := tryLock(filepath.Join(dir, "hub.lock"))
	if err != nil {
		if errors.Is(err, errLocked) {
			st, _ := readState(opts.Home)
			return nil, fmt.Errorf("start hub in %s: %w (pid %d, %s)", opts.Home, ErrHubRunning, st.PID, st.URL)
		}
		return nil, fmt.Errorf("start hub: %w", err)
	}
	h, err := start(opts, dir, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return h, nil
}

func start(opts Options, dir string, lock *os.File) (*Hub, error) {
	last, err := readState(opts.Home)
	haveState := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	token, tokenSum := opts.Token, ""
	if token == "" {
		if token, tokenSum, err = loadToken(opts.Home, last, haveState); err != nil {
			return nil, fmt.Errorf("start hub: %w", err)
		}
	}
	host, port, err := opts.listenAddr(last.Port)
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	au, err := newAuth(token, filepath.Join(dir, "agents.json"))
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	if au.leaves, err = loadLeaves(filepath.Join(dir, "leaves.json")); err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	join, err := loadJoin(opts.Home, opts.Join)
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	sopts := &server.Options{
		ServerName:                 opts.ServerName,
		Host:                       host,
		Port:                       port,
		CustomClientAuthentication: au,
		JetStream:                  true,
		StoreDir:                   filepath.Join(dir, "jetstream"),
		JetStreamMaxStore:          opts.MaxStore,
		JetStreamMaxMemory:         opts.MaxMemory,
		NoSigs:                     true,
		NoLog:                      opts.Logger == nil,
		MaxPayload:                 1 << 20,
		DisableShortFirstPing:      true,
	}
	scheme, pin := "nats", ""
	if opts.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: opts.TLSCert, KeyFile: opts.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("start hub: TLS %s, %s: %w", opts.TLSCert, opts.TLSKey, err)
		}
		if len(tc.Certificates) == 0 || len(tc.Certificates[0].Certificate) == 0 {
			return nil, fmt.Errorf("start hub: TLS %s: no certificate", opts.TLSCert)
		}
		sopts.TLSConfig = tc
		sopts.TLS = true
		scheme = "tls"
		sum := sha256.Sum256(tc.Certificates[0].Certificate[0])
		pin = hex.EncodeToString(sum[:])
	}
	leafHost, err := setupLeaf(sopts, &opts, join, last.LeafPort)
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	if opts.Logger != nil {
		srv.SetLoggerV2(slogAdapter{opts.Logger}, false, false, false)
	}
	srv.Start()
	if !srv.ReadyForConnections(opts.ReadyTimeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("start hub: NATS server on %s:%d not ready after %v (port in use?)", host, port, opts.ReadyTimeout)
	}
	addr, ok := srv.Addr().(*net.TCPAddr)
	if !ok {
		srv.Shutdown()
		return nil, errors.New("start hub: server has no TCP address")
	}
	urlHost := host
	if host == "0.0.0.0" || host == "::" {
		urlHost = "127.0.0.1"
	}
	h := &Hub{
		srv:    srv,
		url:    fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(urlHost, strconv.Itoa(addr.Port))),
		token:  token,
		home:   opts.Home,
		lock:   lock,
		port:   addr.Port,
		pin:    pin,
		auth:   au,
		domain: sopts.JetStreamDomain,
		join:   join,
	}
	leafPort := h.setLeafURL(leafHost, sopts.LeafNode.Port, scheme)
	if h.creds, err = h.serveCredentials(); err != nil {
		srv.Shutdown()
		return nil, fmt.Errorf("start hub: %w", err)
	}
	if err := h.serveLeaves(h.creds); err != nil {
		h.creds.Close()
		srv.Shutdown()
		return nil, fmt.Errorf("start hub: %w", err)
	}
	if err := h.startBridges(opts.Logger); err != nil {
		h.creds.Close()
		srv.Shutdown()
		return nil, fmt.Errorf("start hub: %w", err)
	}
	h.lastDash = last.DashboardPort
	h.stopServices = func() {}
	if opts.Services != nil {
		stop, err := opts.Services(h)
		if err != nil {
			h.bridges.stop()
			h.creds.Close()
			srv.Shutdown()
			return nil, fmt.Errorf("start hub: %w", err)
		}
		h.stopServices = stop
	}
	h.guard = make(chan struct{})
	go guardDisk(srv, sopts.StoreDir, opts.MaxStore, h.guard)
	h.st = state{URL: h.url, Port: addr.Port, PID: os.Getpid(), Started: time.Now().UTC(), DashboardPort: last.DashboardPort, TLSPin: pin,
		TokenSHA256: tokenSum, LeafPort: leafPort}
	if err := writeState(opts.Home, h.st); err != nil {
		close(h.guard)
		h.stopServices()
		h.bridges.stop()
		h.creds.Close()
		srv.Shutdown()
		return nil, err
	}
	return h, nil
}

// URL is the NATS URL clients connect to (without the token).
func (h *Hub) URL() string { return h.url }

// Home is the state folder the hub runs in.
func (h *Hub) Home() string { return h.home }

// Token is the secret clients must present.
func (h *Hub) Token() string { return h.token }

// Endpoint is how a client on this machine reaches the hub, as Discover
// would find it.
func (h *Hub) Endpoint() Endpoint { return Endpoint{URL: h.url, Token: h.token, TLSPin: h.pin} }

// Server is the embedded NATS server, for callers that serve more on it
// (the dashboard) or inspect it in tests.
func (h *Hub) Server() *server.Server { return h.srv }

// Shutdown stops the server, waits for it and marks the hub stopped in its
// home. It is safe to call more than once.
func (h *Hub) Shutdown() {
	if h.lock == nil {
		return
	}
	h.stopServices()
	close(h.guard)
	h.bridges.stop()
	h.creds.Close()
	h.srv.Shutdown()
	h.srv.WaitForShutdown()
	h.mu.Lock()
	_ = writeState(h.home, state{URL: h.url, Port: h.port, PID: 0, DashboardPort: h.st.DashboardPort, TokenSHA256: h.st.TokenSHA256,
		LeafPort: h.st.LeafPort})
	h.mu.Unlock()
	h.lock.Close()
	h.lock = nil
}

// LastDashboardPort is the port the hub's dashboard had on the previous
// run (0 if none), so that a restarted dashboard keeps its address.
func (h *Hub) LastDashboardPort() int { return h.lastDash }

// SetDashboard records the dashboard's URL (without the token) beside the
// hub's in hub.json, where Dashboard finds it; "" records that there is none.
func (h *Hub) SetDashboard(rawURL string) error {
	port := 0
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("record dashboard: bad URL %q", rawURL)
		}
		port, _ = strconv.Atoi(u.Port())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	st.Dashboard = rawURL
	if port != 0 {
		st.DashboardPort = port
	}
	if err := writeState(h.home, st); err != nil {
		return err
	}
	h.st = st
	return nil
}

// loadToken reads the stored token, or creates one (32 random bytes, hex)
// when there is none. It returns the token and its SHA-256 (hex). A new
// token's SHA-256 goes into hub.json before the token file is written, so
// that a token file is never without the record that vouches for it.
func loadToken(home string, last state, haveState bool) (token, sum string, err error) {
	dir := Dir(home)
	if !haveState {
		last = state{}
	}
	t, err := readToken(dir, last)
	if err == nil && t != "" {
		return t, tokenSum(t), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("read hub token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("generate hub token: %w", err)
	}
	t = hex.EncodeToString(raw)
	last.TokenSHA256 = tokenSum(t)
	if err := writeState(home, last); err != nil {
		return "", "", err
	}
	if err := writeFileAtomic(filepath.Join(dir, "token"), []byte(t+"\n")); err != nil {
		return "", "", fmt.Errorf("write hub token: %w", err)
	}
	return t, last.TokenSHA256, nil
}

// slogAdapter passes the NATS server's log lines to a slog.Logger.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Noticef(f string, v ...any) { a.l.Info(fmt.Sprintf(f, v...), "from", "nats") }
func (a slogAdapter) Warnf(f string, v ...any)   { a.l.Warn(fmt.Sprintf(f, v...), "from", "nats") }
func (a slogAdapter) Fatalf(f string, v ...any)  { a.l.Error(fmt.Sprintf(f, v...), "from", "nats") }
func (a slogAdapter) Errorf(f string, v ...any)  { a.l.Error(fmt.Sprintf(f, v...), "from", "nats") }
func (a slogAdapter) Debugf(f string, v ...any)  { a.l.Debug(fmt.Sprintf(f, v...), "from", "nats") }
func (a slogAdapter) Tracef(f string, v ...any)  { a.l.Debug(fmt.Sprintf(f, v...), "from", "nats") }
