package relay

import "github.com/relayhq/relay/internal/statedir"

// DefaultHome returns the state folder relay uses when nothing says
// otherwise: RELAY_HOME, else $XDG_STATE_HOME/relay, else
// ~/.local/state/relay. It does not create or check it; the hub refuses a
// folder that another user owns or others can write when it starts.
func DefaultHome() (string, error) {
	return statedir.Lookup(nil)
}
