package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/relayhq/relay/internal/mailbox"
)

// The stdio transport of relay mcp. The SDK's own (mcp.IOTransport) ends
// the session at the first line it cannot decode, and at the end of input
// it closes the session at once, cancelling calls still running: a client
// that writes a tools/call and closes its end got no reply, and the message
// was not sent. This one answers a bad line with a JSON-RPC error and reads
// on, and at the end of input waits for every call it handed to the server
// to be answered before it reports the end.
//
//	stdin ─► lines ─► not JSON: -32700 │ not a request or response: -32600
//	                 └─► the SDK ─► calls (pending until answered) ─► stdout

// drainTimeout bounds how long the end of input waits for calls still
// running; a tool's own timeouts end it well before.
const drainTimeout = 2 * time.Minute

// stdioTransport is an mcp.Transport over a reader and a writer of
// newline-delimited JSON-RPC messages.
type stdioTransport struct {
	r      io.Reader
	w      io.Writer
	logger *slog.Logger
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:       t.w,
		logger:  t.logger,
		lines:   make(chan []byte),
		closed:  make(chan struct{}),
		pending: map[jsonrpc.ID]struct{}{},
		idle:    mailbox.NewSignal(),
	}
	go c.readLines(t.r)
	return c, nil
}

// stdioConn is one session on the stream.
type stdioConn struct {
	w      io.Writer
	logger *slog.Logger
	wmu    sync.Mutex // one message written at a time

	lines   chan []byte // from readLines; closed at the end of input
	readErr error       // why lines was closed (io.EOF at the end); set before
	closed  chan struct{}
	once    sync.Once

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // calls handed to the server, not answered
	idle    mailbox.Signal          // a signal that pending may be empty
}

// maxLine bounds one message, as the SDK's transport does.
const maxLine = mcp.DefaultMaxLineLength

// readLines sends each line of r to c.lines until r ends.
func (c *stdioConn) readLines(r io.Reader) {
	defer close(c.lines)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		tooLong := errors.Is(err, errLineTooLong)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			select { // a nil line is one too long (see decode)
			case c.lines <- line:
			case <-c.closed:
				return
			}
		}
		if err != nil && !tooLong {
			c.readErr = err
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line of br without its line end, and io.EOF
// with a last line that has none. A line longer than maxLine is read to its
// end and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > maxLine {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong && (err == nil || errors.Is(err, io.EOF)) {
			return nil, errLineTooLong
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// Read returns the next message for the server. Lines that are not one are
// answered here. At the end of input it waits until every call it returned
// has been answered, then returns io.EOF.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case line, ok := <-c.lines:
			if !ok {
				return nil, c.drain(ctx)
			}
			if msg := c.decode(ctx, line); msg != nil {
				return msg, nil
			}
		}
	}
}

// decode turns a line into a message, or answers it with an error and
// returns nil.
func (c *stdioConn) decode(ctx context.Context, line []byte) jsonrpc.Message {
	if line == nil {
		c.fail(ctx, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes", maxLine))
		return nil
	}
	if !json.Valid(line) {
		c.fail(ctx, nil, jsonrpc.CodeParseError, "parse error: not JSON")
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		what := "not a JSON-RPC message object"
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
			what = "JSON-RPC batches are not supported (MCP 2025-06-18 dropped them)"
		}
		c.fail(ctx, nil, jsonrpc.CodeInvalidRequest, "invalid request: "+what)
		return nil
	}
	id := requestID(obj["id"])
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result == nil && resp.Error == nil {
			err = errors.New("neither a method nor a result nor an error")
		}
	}
	if err != nil {
		c.fail(ctx, id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case req.ID.IsValid():
			c.mu.Lock()
			c.pending[req.ID] = struct{}{}
			c.mu.Unlock()
		case req.Method == "notifications/cancelled":
			// The client gave up on a call: the server may not answer it.
			c.cancelled(req.Params)
		}
	}
	return msg
}

// requestID returns the raw id of a message when it is one JSON-RPC allows
// (a string or a number), else nil (the error reply's id is then null).
func requestID(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

// cancelled forgets a call the client cancelled.
func (c *stdioConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.answered(id)
}

// answered removes a call from the pending ones.
func (c *stdioConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	empty := len(c.pending) == 0
	c.mu.Unlock()
	if empty {
		c.idle.Notify()
	}
}

// drain waits at the end of input until every call has been answered (or
// drainTimeout passes, or ctx ends), and returns why the input ended.
func (c *stdioConn) drain(ctx context.Context) error {
	timeout := time.NewTimer(drainTimeout)
	defer timeout.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-c.idle:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return io.EOF
		case <-timeout.C:
			c.logger.Warn("end of input: calls still running are abandoned", "calls", n, "waited", drainTimeout)
			return io.EOF
		}
	}
	if c.readErr != nil && !errors.Is(c.readErr, io.EOF) {
		return fmt.Errorf("read MCP input: %w", c.readErr)
	}
	return io.EOF
}

// Write writes a message of the server's, one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode MCP message: %w", err)
	}
	if err := c.writeLine(ctx, data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answered(resp.ID)
	}
	return nil
}

// fail answers a line that is not a message with a JSON-RPC error.
func (c *stdioConn) fail(ctx context.Context, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.logger.Warn("bad MCP input answered with an error", "code", code, "err", message)
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}})
	if err == nil {
		err = c.writeLine(ctx, data)
	}
	if err != nil {
		c.logger.Warn("cannot answer bad MCP input", "err", err)
	}
}

func (c *stdioConn) writeLine(ctx context.Context, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write MCP output: %w", err)
	}
	return nil
}

// Close ends the session; a Read waiting for input returns.
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) SessionID() string { return "" }
