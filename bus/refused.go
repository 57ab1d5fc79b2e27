package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrRevoked means the hub revoked this client's credentials while it was
// connected (relay creds revoke, an account update): the server closed the
// connection and refuses it from then on. New credentials are needed.
var ErrRevoked = errors.New("hub revoked the credentials")

// noteRevoked remembers that the server said the credentials were revoked;
// the reconnections that follow are refused with a plain authorization
// error, which alone would not tell a revocation from a wrong credential.
func (c *Client) noteRevoked(err error) {
	if errors.Is(err, nats.ErrAuthRevoked) {
		c.revoked.Store(true)
	}
}

// onClosed is the connection's closed handler: a connection closed by the
// server for its credentials (nats.go gives up reconnecting after the
// same refusal twice on a server) is told through Options.OnRefused.
func (c *Client) onClosed(nc *nats.Conn) {
	if !c.closing.Load() && c.opts.OnRefused != nil {
		if err := c.refusal(nc.LastError()); err != nil {
			c.log.Error("the hub refused this client's credentials; not reconnecting", "err", err)
			c.opts.OnRefused(err)
		}
	}
	close(c.closed)
}

// refusal is why the connection was closed when the server refused the
// credentials (last is its last error), or nil.
func (c *Client) refusal(last error) error {
	auth := errors.Is(last, nats.ErrAuthorization) || errors.Is(last, nats.ErrAuthRevoked) ||
		errors.Is(last, nats.ErrAuthExpired) || errors.Is(last, nats.ErrAccountAuthExpired)
	switch {
	case c.revoked.Load():
		return fmt.Errorf("%w: %w", ErrRevoked, last)
	case auth:
		return fmt.Errorf("%w: %w", ErrUnauthorized, last)
	}
	return nil
}

// MarkRevoked records in the presence bucket that agent name's credentials
// were revoked (Presence.Revoked, the State offline), so that relay agents
// and doctor show it rather than an agent that went quiet: the wrapper,
// cut off, cannot say it. It needs the administrator's rights. A new claim
// of the name (new credentials) replaces the record.
func (c *Client) MarkRevoked(ctx context.Context, name string) error {
	r := record{}
	if e, err := c.kv.Get(ctx, name); err == nil {
		_ = json.Unmarshal(e.Value(), &r)
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("mark %s revoked: %w", name, err)
	}
	now := time.Now().UTC()
	r.State, r.Since, r.Revoked, r.Stuck, r.Ask, r.Session = StateOffline, now, now, nil, nil, ""
	b, _ := json.Marshal(r)
	if _, err := c.kv.Put(ctx, name, b); err != nil {
		return fmt.Errorf("mark %s revoked: %w", name, err)
	}
	return nil
}
