package relay

import (
	"errors"
	"os"
	"path/filepath"
)

// DefaultHome returns the state folder relay uses when nothing says
// otherwise: RELAY_HOME, else $XDG_STATE_HOME/relay, else
// ~/.local/state/relay. It does not create it.
func DefaultHome() (string, error) {
	if h := os.Getenv("RELAY_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "relay"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("relay: no state folder: set RELAY_HOME")
	}
	return filepath.Join(home, ".local", "state", "relay"), nil
}
