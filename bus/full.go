package bus

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrHubFull means the hub has no room to store a message: its disk is
// full, or its store reached the size it was given (relay up --max-store).
// Nothing was stored. A hub sized from its configuration (package hub does
// so) accepts messages again as soon as space is freed, without a restart.
// Connect returns it too when the workspace's stream cannot be created for
// want of space: a wrapper that gets it has not joined its team.
var ErrHubFull = errors.New("the hub's message store is full")

// JetStream error codes for a store with no room.
const (
	jsAccountResourcesExceeded = 10002 // "resource limits exceeded for account": the hub's disk guard
	jsInsufficientResources    = 10023 // "insufficient resources": the server's store limit
	jsMemoryResourcesExceeded  = 10028
	jsStorageResourcesExceeded = 10047 // "insufficient storage resources available"
	jsStreamStoreFailed        = 10077 // "{err}": the store's own write error, e.g. no space left
)

// hubFull wraps err with ErrHubFull when the server said it has no room,
// and returns it unchanged otherwise.
func hubFull(err error) error {
	if err == nil || errors.Is(err, ErrHubFull) {
		return err
	}
	full := false
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jsAccountResourcesExceeded, jsInsufficientResources, jsMemoryResourcesExceeded, jsStorageResourcesExceeded:
			full = true
		case jsStreamStoreFailed:
			full = strings.Contains(apiErr.Description, "no space left")
		}
	}
	msg := err.Error()
	full = full || strings.Contains(msg, "insufficient resources") || strings.Contains(msg, "insufficient storage") ||
		strings.Contains(msg, "resource limits exceeded") ||
		strings.Contains(msg, "no space left")
	if !full {
		return err
	}
	return fmt.Errorf("%w (free disk space where the hub keeps its store, or give it more with relay up --max-store): %w", ErrHubFull, err)
}
