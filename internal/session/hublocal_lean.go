//go:build lean

package session

import (
	"context"
	"errors"

	"github.com/relayhq/relay/internal/hub"
)

// errLeanNoLocalHub is why the lean build (the relay binary that only
// joins hubs, docs/architecture.md) cannot run a hub inside itself: it
// links no nats-server. Its relay wrap starts a detached one with relay-hub
// instead, so this is reached only without any relay binary.
var errLeanNoLocalHub = errors.New("this relay build runs no hub inside itself (built with the lean tag)")

// startLocalHub fails in the lean build: see errLeanNoLocalHub.
func (s *Session) startLocalHub(context.Context) (hub.Endpoint, error) {
	return hub.Endpoint{}, errLeanNoLocalHub
}
