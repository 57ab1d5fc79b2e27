package hookrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Call sends req to the server listening on path and returns its
// response. It gives up when ctx ends; ctx's deadline, if any, is passed
// to the server as req.Deadline unless that is set. The payload must be
// valid JSON (empty means null) of at most MaxPayload bytes.
func Call(ctx context.Context, path string, req Request) (Response, error) {
	if len(req.Payload) == 0 {
		req.Payload = nil
	}
	if len(req.Payload) > MaxPayload {
		return Response{}, fmt.Errorf("hook %s: payload of %d bytes is over the %d-byte limit: %w",
			req.Event, len(req.Payload), MaxPayload, ErrTooLarge)
	}
	if req.Payload != nil && !json.Valid(req.Payload) {
		return Response{}, fmt.Errorf("hook %s: payload is not valid JSON", req.Event)
	}
	dl, hasDeadline := ctx.Deadline()
	if hasDeadline && req.Deadline.IsZero() {
		req.Deadline = dl
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return Response{}, fmt.Errorf("hook %s: %w", req.Event, err)
	}
	defer conn.Close()
	if hasDeadline {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("hook %s: %w", req.Event, err)
	}
	if _, err := conn.Write(b); err != nil {
		return Response{}, fmt.Errorf("hook %s: send to %s: %w", req.Event, path, ctxErr(ctx, err))
	}
	var resp Response
	if _, err := readJSON(conn, MaxStdout+envelope, &resp, "hook response"); err != nil {
		return Response{}, fmt.Errorf("hook %s: from %s: %w", req.Event, path, ctxErr(ctx, err))
	}
	// The server counts the response as delivered only once it has the
	// ack; a failed ack write cannot take back what was read.
	conn.Write([]byte{ack})
	return resp, nil
}

// ctxErr prefers the context's error to the I/O error it caused (the
// connection's deadline, which is the context's, may fire first).
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}
