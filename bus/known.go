package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// IsAgent reports whether name ever registered as an agent of the
// workspace: a message from a name that did not was sent by a person or a
// script (relay send, the dashboard). It asks the hub only for a name not
// seen registered before, one key read.
func (c *Client) IsAgent(ctx context.Context, name string) (bool, error) {
	if c.names.has(name) {
		return true, nil
	}
	_, err := c.kv.Get(ctx, name)
	switch {
	case err == nil:
		c.names.add(name)
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("look up agent %s: %w", name, err)
	}
}
