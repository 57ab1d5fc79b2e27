package bus

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/nats-io/nats.go"
)

// ErrPermission means the hub refused a publish with this connection's
// credential: an agent's own credential (the identity file) may send as
// that agent and little else, so it may not, for example, stop another
// agent.
var ErrPermission = errors.New("not permitted with this credential")

// A publish the hub refuses is not an error of the publish call: the
// server answers with an asynchronous -ERR, and a request would wait for
// its timeout and look like nobody answered. Callers that must tell a
// refusal apart watch the subject for the time of the call.

// publishDeniedRe finds the subject in the server's "Permissions Violation
// for Publish to "SUBJECT"" error.
var publishDeniedRe = regexp.MustCompile(`(?i)publish to "([^"]+)"`)

// deniedWatches are the watches of Client.watchPublish.
type deniedWatches struct {
	mu sync.Mutex
	w  map[*deniedWatch]struct{}
}

type deniedWatch struct {
	subject string
	cancel  context.CancelCauseFunc
}

// watchPublish returns a context that ends, with an ErrPermission cause
// (context.Cause), as soon as the hub refuses to let this connection
// publish to subject. Call stop when the publish is done.
func (c *Client) watchPublish(ctx context.Context, subject string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &deniedWatch{subject: subject, cancel: cancel}
	d := &c.denied
	d.mu.Lock()
	if d.w == nil {
		d.w = map[*deniedWatch]struct{}{}
	}
	d.w[w] = struct{}{}
	d.mu.Unlock()
	return ctx, func() {
		d.mu.Lock()
		delete(d.w, w)
		d.mu.Unlock()
		cancel(nil)
	}
}

// publishDenied ends the watches of the subject a permissions violation
// names; it is called with every asynchronous error of the connection.
func (c *Client) publishDenied(err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	m := publishDeniedRe.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	d := &c.denied
	d.mu.Lock()
	defer d.mu.Unlock()
	for w := range d.w {
		if w.subject == m[1] {
			w.cancel(fmt.Errorf("%w: the hub refused a publish to %s", ErrPermission, m[1]))
		}
	}
}

// refused returns the ErrPermission cause that ended ctx, or nil.
func refused(ctx context.Context) error {
	if err := context.Cause(ctx); errors.Is(err, ErrPermission) {
		return err
	}
	return nil
}
