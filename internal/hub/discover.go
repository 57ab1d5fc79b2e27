package hub

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/relayhq/relay/internal/logfile"
	"github.com/relayhq/relay/internal/statedir"
)

// Dir returns the hub's folder inside home.
func Dir(home string) string { return filepath.Join(home, "hub") }

// ErrHubExited is returned by StartDetached when the hub it started exited
// before it answered: it could not listen on its address, its folder was
// refused, ... The error says why, from the hub's log.
var ErrHubExited = errors.New("the hub did not start")

// ErrNoHub means no hub is running for a home: there is no record of one,
// it was stopped, its process is gone, or its port does not answer.
var ErrNoHub = errors.New("no hub running")

// state is hub.json.
type state struct {
	URL     string    `json:"url"`
	Port    int       `json:"port"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started,omitzero"`
	// Dashboard is the URL of the hub's dashboard (without the token), empty
	// when it serves none; DashboardPort is remembered across restarts.
	Dashboard     string `json:"dashboard,omitempty"`
	DashboardPort int    `json:"dashboard_port,omitempty"`
	// TLSPin is the hex SHA-256 of the certificate a TLS hub serves.
	TLSPin string `json:"tls_pin,omitempty"`
	// TokenSHA256 is the hex SHA-256 of the token file relay wrote; a token
	// file that does not match it was not written by relay and is refused.
	// Empty in the records of older hubs, and when Options.Token was given.
	TokenSHA256 string `json:"token_sha256,omitempty"`
	// LeafPort is the port of the leafnode listener, kept across restarts:
	// the tickets given out name it.
	LeafPort int `json:"leaf_port,omitempty"`
}

// Endpoint is how a client on this machine reaches a hub it found through
// RELAY_HOME.
type Endpoint struct {
	URL   string // the NATS URL, without the token
	Token string // the secret the hub asks for
	// TLSPin is the hex SHA-256 of the DER certificate a TLS hub serves, ""
	// without TLS. A local client trusts that certificate and no other,
	// instead of checking it against CAs and the host name: the hub's
	// certificate names the machine's public name, never 127.0.0.1.
	TLSPin string
}

func statePath(home string) string { return filepath.Join(Dir(home), "hub.json") }

// readState reads hub.json, refusing (statedir.ErrUnsafe) a hub folder or
// record that another user owns or others can write: its pid is what
// relay down signals.
func readState(home string) (state, error) {
	var st state
	if err := statedir.CheckDir(Dir(home)); err != nil {
		return st, err
	}
	b, err := statedir.ReadSecret(statePath(home))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("read %s: %w", statePath(home), err)
	}
	return st, nil
}

func writeState(home string, st state) error {
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := writeFileAtomic(statePath(home), append(b, '\n')); err != nil {
		return fmt.Errorf("record hub: %w", err)
	}
	return nil
}

// writeFileAtomic writes a 0600 file through a temporary file and a rename,
// so that a reader never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

var errLocked = errors.New("locked")

// tryLock takes an exclusive flock on path without waiting.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// lock takes an exclusive flock on path, polling until ctx is done.
func lock(ctx context.Context, path string) (*os.File, error) {
	for {
		f, err := tryLock(path)
		if !errors.Is(err, errLocked) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Discover returns how to reach the hub running for home, or an error
// wrapping ErrNoHub that says why none is (never started, stopped, process
// gone, port not answering).
func Discover(home string) (Endpoint, error) {
	return discover(home, true)
}

// Find returns the hub that home's record names, as Discover does, without
// asking the hub whether it answers: for a caller that connects to it at
// once, whose connection asks (issue 34: a wrapper's start opened one
// connection to ask, then another to join). A caller whose connection is
// refused calls Discover to learn why, or EnsureRunning to start a hub.
func Find(home string) (Endpoint, error) {
	return discover(home, false)
}

// discover is Discover, which asks the hub when ask is set, and Find.
func discover(home string, ask bool) (Endpoint, error) {
	st, err := readState(home)
	if errors.Is(err, os.ErrNotExist) {
		return Endpoint{}, fmt.Errorf("%w in %s", ErrNoHub, home)
	}
	if err != nil {
		return Endpoint{}, fmt.Errorf("find hub: %w", err)
	}
	if st.PID == 0 {
		return Endpoint{}, fmt.Errorf("%w in %s: the hub at %s was stopped", ErrNoHub, home, st.URL)
	}
	if !pidAlive(st.PID) {
		return Endpoint{}, fmt.Errorf("%w in %s: the hub at %s (pid %d) is gone", ErrNoHub, home, st.URL, st.PID)
	}
	if ask {
		if err := probe(st.URL); err != nil {
			return Endpoint{}, fmt.Errorf("%w in %s: the hub at %s (pid %d) does not answer: %v", ErrNoHub, home, st.URL, st.PID, err)
		}
	}
	token, err := readToken(Dir(home), st)
	if err != nil {
		return Endpoint{}, fmt.Errorf("read hub token: %w", err)
	}
	return Endpoint{URL: st.URL, Token: token, TLSPin: st.TLSPin}, nil
}

// ErrNoDashboard means the hub runs without a dashboard (relay up
// --dashboard off, or an older hub).
var ErrNoDashboard = errors.New("the hub serves no dashboard")

// Dashboard returns the URL (without the token) of the dashboard of the hub
// running for home, and the hub's token that opens it. The error wraps
// ErrNoHub when no hub runs, ErrNoDashboard when it serves none.
func Dashboard(home string) (url, token string, err error) {
	ep, err := Discover(home)
	if err != nil {
		return "", "", err
	}
	token = ep.Token
	st, err := readState(home)
	if err != nil {
		return "", "", err
	}
	if st.Dashboard == "" {
		return "", "", fmt.Errorf("%w (hub at %s, pid %d); restart it with relay up --dashboard 127.0.0.1:0", ErrNoDashboard, st.URL, st.PID)
	}
	return st.Dashboard, token, nil
}

// probe checks that a NATS server answers at rawURL: it sends INFO first.
func probe(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "INFO ") {
		return fmt.Errorf("not a NATS server (said %.20q)", line)
	}
	var info struct {
		TLS bool `json:"tls_required"`
	}
	if json.Unmarshal([]byte(line[len("INFO "):]), &info) == nil && info.TLS {
		// Finish the handshake that a TLS hub waits for, or it logs each
		// probe as a failed one. Who answers does not matter here: the
		// client that connects next checks the certificate.
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("TLS handshake: %w", err)
		}
	}
	return nil
}

// DetachOptions configure StartDetached.
type DetachOptions struct {
	// Home is the state folder; required.
	Home string
	// Executable is the relay binary; it is run as `Executable up Args...`.
	Executable string
	// Args follow "up" (for example "--listen", "127.0.0.1:4222").
	Args []string
	// Env is the child's environment; nil means os.Environ(). RELAY_HOME is
	// set to Home either way.
	Env []string
	// Timeout bounds the wait for the hub to answer; zero means 15 s.
	Timeout time.Duration
}

// StartDetached starts `relay up` in a new session, with its output going
// to hub.log in the hub's folder, and waits until it answers. It returns the
// hub's endpoint.
func StartDetached(ctx context.Context, o DetachOptions) (Endpoint, error) {
	if o.Executable == "" {
		return Endpoint{}, errors.New("start detached hub: no relay executable")
	}
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	dir := Dir(o.Home)
	if err := CheckHome(o.Home); err != nil { // say it here, not in the child's log
		return Endpoint{}, fmt.Errorf("start detached hub: %w", err)
	}
	logPath := filepath.Join(dir, "hub.log")
	logf, err := logfile.Open(logPath, 0)
	if err != nil {
		return Endpoint{}, fmt.Errorf("start detached hub: %w", err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd) // where this start's lines begin
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return Endpoint{}, fmt.Errorf("start detached hub: %w", err)
	}
	defer devnull.Close()
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(append([]string(nil), env...), "RELAY_HOME="+o.Home)
	attr := &os.ProcAttr{
		Env:   env,
		Files: []*os.File{devnull, logf, logf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	argv := append([]string{o.Executable, "up"}, o.Args...)
	proc, err := os.StartProcess(o.Executable, argv, attr)
	if err != nil {
		return Endpoint{}, fmt.Errorf("start detached hub %s: %w", o.Executable, err)
	}
	exited := make(chan error, 1)
	go func() { // reap the child whenever it ends
		st, err := proc.Wait()
		if err == nil {
			err = fmt.Errorf("%v", st)
		}
		exited <- err
	}()
	deadline := time.NewTimer(o.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if ep, err := Discover(o.Home); err == nil {
			if st, _ := readState(o.Home); st.PID == proc.Pid {
				return ep, nil
			}
		}
		select {
		case err := <-exited:
			return Endpoint{}, fmt.Errorf("%w: %s (%v; log: %s)", ErrHubExited, exitReason(logPath, logStart), err, logPath)
		case <-ctx.Done():
			return Endpoint{}, fmt.Errorf("start detached hub: %w", ctx.Err())
		case <-deadline.C:
			_ = proc.Signal(syscall.SIGTERM)
			return Endpoint{}, fmt.Errorf("detached hub did not answer within %v; see %s", o.Timeout, logPath)
		case <-tick.C:
		}
	}
}

// CheckHome creates home and its hub folder (0700) if missing and checks
// what Start would check before trusting them: both folders belong to the
// user and no one else can write them; hub.json and the token file, when
// there, are the user's, private, and the token is the one relay recorded.
// A refusal wraps statedir.ErrUnsafe and names its fix.
func CheckHome(home string) error {
	if err := ensureDirs(home); err != nil {
		return err
	}
	st, err := readState(home)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := readToken(Dir(home), st); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// EnsureRunning returns the hub running for home, or starts a detached one
// with exe (the relay binary) and returns that. A lock file makes two
// callers at once (two wrappers in two terminals) start only one hub.
func EnsureRunning(ctx context.Context, home, exe string) (Endpoint, error) {
	return EnsureRunningWith(ctx, home, func(ctx context.Context) (Endpoint, error) {
		return StartDetached(ctx, DetachOptions{Home: home, Executable: exe})
	})
}

// EnsureRunningWith returns the hub running for home, or the one start
// starts, under the same lock as EnsureRunning: a program that has no relay
// binary to run `relay up --detach` with starts a hub inside itself
// (Start) this way, and two such programs start only one.
func EnsureRunningWith(ctx context.Context, home string, start func(context.Context) (Endpoint, error)) (Endpoint, error) {
	if err := ensureDirs(home); err != nil {
		return Endpoint{}, fmt.Errorf("ensure hub: %w", err)
	}
	if ep, err := Discover(home); err == nil {
		return ep, nil
	}
	l, err := lock(ctx, filepath.Join(Dir(home), "start.lock"))
	if err != nil {
		return Endpoint{}, fmt.Errorf("ensure hub: %w", err)
	}
	defer l.Close()
	if ep, err := Discover(home); err == nil {
		return ep, nil
	}
	return start(ctx)
}

// Stop sends SIGTERM to the hub running for home and waits until its
// process is gone. It returns an error wrapping ErrNoHub when none runs.
func Stop(ctx context.Context, home string) (url string, err error) {
	st, err := readState(home)
	if errors.Is(err, os.ErrNotExist) || (err == nil && (st.PID == 0 || !pidAlive(st.PID))) {
		return "", fmt.Errorf("%w in %s", ErrNoHub, home)
	}
	if err != nil {
		return "", fmt.Errorf("stop hub: %w", err)
	}
	if st.PID == os.Getpid() {
		return "", fmt.Errorf("stop hub: the hub runs in this process (pid %d)", st.PID)
	}
	if err := unix.Kill(st.PID, unix.SIGTERM); err != nil {
		return "", fmt.Errorf("stop hub (pid %d): %w", st.PID, err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for pidAlive(st.PID) {
		if l, err := tryLock(filepath.Join(Dir(home), "hub.lock")); err == nil {
			l.Close() // the hub let go of its home: it is done
			break
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("stop hub (pid %d): still running: %w", st.PID, ctx.Err())
		case <-tick.C:
		}
	}
	return st.URL, nil
}

// exitReason returns why a detached hub exited, from what it wrote to its
// log since offset: its first error line, without the command's prefix or
// the usage hint.
func exitReason(logPath string, offset int64) string {
	f, err := os.Open(logPath)
	if err != nil {
		return "see its log"
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return "see its log"
	}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if reason, ok := strings.CutPrefix(line, "relay up: "); ok {
			return reason
		}
	}
	return "see its log"
}

// ensureDirs creates home and its hub folder 0700 and refuses either when
// another user owns it or others can write it.
func ensureDirs(home string) error {
	_, err := statedir.EnsureSub(home, filepath.Base(Dir(home)))
	return err
}

func tokenSum(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// readToken reads the token file of the hub folder dir, refusing one that
// relay did not write: another user's, one others can read or write, one
// without a hub.json beside it (st is zero), or one that does not match
// the SHA-256 that hub.json records. "" with no error means an empty file.
func readToken(dir string, st state) (string, error) {
	path := filepath.Join(dir, "token")
	b, err := statedir.ReadSecret(path)
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	switch {
	case st == (state{}):
		return "", &statedir.UnsafeError{Path: path, Problem: "has no hub.json beside it: relay did not write it",
			Fix: "rm " + path + " (relay up writes a new one)"}
	case st.TokenSHA256 != "" && st.TokenSHA256 != tokenSum(t):
		return "", &statedir.UnsafeError{Path: path, Problem: "does not match the token relay recorded in hub.json: relay did not write it",
			Fix: "rm " + path + " (relay up writes a new one)"}
	}
	return t, nil
}
