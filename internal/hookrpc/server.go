package hookrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// maxSocketPath is the longest path a Unix socket may have on Linux
// (sun_path is 108 bytes, NUL included).
const maxSocketPath = 107

// socketName is the socket's name inside its private, randomly named
// folder.
const socketName = "hook.sock"

// envelope is what a request may add to its payload (event, deadline,
// JSON punctuation).
const envelope = 64 << 10

// Server time limits for one connection.
const (
	// requestTimeout bounds reading a request: a hook process that
	// connects and says nothing does not hold a goroutine for long.
	requestTimeout = 5 * time.Second
	// ackTimeout bounds writing the response and waiting for the hook
	// process to confirm it read it.
	ackTimeout = time.Second
)

// Handler answers one hook. ctx ends when the hook process stops waiting
// (its deadline, less a margin, or it went away) or the server stops.
type Handler func(ctx context.Context, req Request) Response

// Server listens on a private Unix socket for `relay hook` processes.
type Server struct {
	// ErrorLog, when not nil, is told about connections that failed (a
	// malformed or oversized request). Set it before Serve.
	ErrorLog func(err error)

	ln     *net.UnixListener
	dir    string // the private folder, removed by Close
	path   string
	closed atomic.Bool
	once   sync.Once
}

// Listen creates a Unix socket (mode 0600) in a new private folder (mode
// 0700, random name) inside dir, creating dir if needed. When that path
// would be too long for a Unix socket, or dir is empty, the private folder
// is made in the system's temporary folder instead. Close removes both.
func Listen(dir string) (*Server, error) {
	priv, err := privateDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(priv, socketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(priv)
		return nil, fmt.Errorf("listen on hook socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.RemoveAll(priv)
		return nil, fmt.Errorf("listen on hook socket %s: %w", path, err)
	}
	return &Server{ln: ln, dir: priv, path: path}, nil
}

// privateDir makes the socket's folder: in dir when the socket path fits,
// else in the system's temporary folder.
func privateDir(dir string) (string, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("hook socket folder %s: %w", dir, err)
		}
		// MkdirTemp adds up to 10 digits to the pattern.
		if len(filepath.Join(abs, "hook-0123456789", socketName)) <= maxSocketPath {
			if err := os.MkdirAll(abs, 0o700); err != nil {
				return "", fmt.Errorf("hook socket folder: %w", err)
			}
			priv, err := os.MkdirTemp(abs, "hook-")
			if err != nil {
				return "", fmt.Errorf("hook socket folder: %w", err)
			}
			return priv, nil
		}
	}
	priv, err := os.MkdirTemp("", "relay-")
	if err != nil {
		return "", fmt.Errorf("hook socket folder: %w", err)
	}
	if len(filepath.Join(priv, socketName)) > maxSocketPath {
		os.RemoveAll(priv)
		return "", fmt.Errorf("hook socket folder %s: path too long for a Unix socket (max %d bytes)", priv, maxSocketPath)
	}
	return priv, nil
}

// Path is the socket's path, for the hook processes' environment.
func (s *Server) Path() string { return s.path }

// Close stops accepting connections and removes the socket and its
// folder. Exchanges in progress finish (Serve waits for them). It is safe
// to call more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.closed.Store(true)
		err = s.ln.Close()
		if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
			err = fmt.Errorf("remove hook socket folder: %w", rerr)
		}
	})
	return err
}

// Serve answers hook processes with h, each connection in its own
// goroutine, until ctx ends or the server is closed; it then waits for the
// exchanges in progress and returns nil. Other failures to accept are
// returned.
func (s *Server) Serve(ctx context.Context, h Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			if s.closed.Load() || ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("hook socket %s: accept: %w", s.path, err)
		}
		wg.Go(func() {
			if err := s.handle(ctx, conn, h); err != nil && s.ErrorLog != nil {
				s.ErrorLog(err)
			}
		})
	}
}

// handle runs one exchange: request, handler, response, ack.
func (s *Server) handle(ctx context.Context, conn *net.UnixConn, h Handler) error {
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(requestTimeout))
	var req Request
	rest, err := readJSON(conn, MaxPayload+envelope, &req, "hook request")
	if err != nil {
		return err
	}
	if len(req.Payload) > MaxPayload {
		return fmt.Errorf("hook request %s: payload of %d bytes is over %d: %w", req.Event, len(req.Payload), MaxPayload, ErrTooLarge)
	}
	conn.SetReadDeadline(time.Time{})

	hctx, cancel := context.WithCancel(ctx)
	if !req.Deadline.IsZero() {
		hctx, cancel = context.WithDeadline(ctx, req.Deadline.Add(-deadlineMargin))
	}
	defer cancel()
	// The hook process writes nothing more until it has the response: a
	// read that ends before then means it went away.
	acked := make(chan error, 1)
	go func() {
		acked <- readAck(rest)
		cancel()
	}()

	resp := h(hctx, req)
	sent := func(err error) {
		if resp.Sent != nil {
			resp.Sent(err)
		}
	}
	if err := hctx.Err(); err != nil {
		conn.SetReadDeadline(time.Now()) // ends the reader
		<-acked
		err = fmt.Errorf("hook %s: the hook process stopped waiting: %w", req.Event, err)
		sent(err)
		return err
	}
	if len(resp.Stdout) > MaxStdout {
		err := fmt.Errorf("hook %s: response of %d bytes is over %d: %w", req.Event, len(resp.Stdout), MaxStdout, ErrTooLarge)
		conn.SetReadDeadline(time.Now())
		<-acked
		sent(err)
		return err
	}
	conn.SetDeadline(time.Now().Add(ackTimeout))
	if err := json.NewEncoder(conn).Encode(resp); err != nil {
		conn.SetReadDeadline(time.Now())
		<-acked
		err = fmt.Errorf("hook %s: write response: %w", req.Event, err)
		sent(err)
		return err
	}
	if err := <-acked; err != nil {
		err = fmt.Errorf("hook %s: the hook process did not confirm the response: %w", req.Event, err)
		sent(err)
		return err
	}
	sent(nil)
	return nil
}

// readAck reads the client's ack, skipping JSON whitespace that may follow
// the request.
func readAck(r io.Reader) error {
	var b [1]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			continue
		case ack:
			return nil
		default:
			return fmt.Errorf("unexpected byte %q instead of the ack", b[0])
		}
	}
}
