// Package identity is what a wrapped agent's own relay commands (and its
// hooks' and handlers') know about it: the file that `relay wrap` writes
// for its child, whose path is in the environment variable FileEnv.
//
// The file is the user's, mode 0600, in RELAY_HOME (0700); it holds the
// agent's own NATS credential, never the workspace token. Its path, not
// its content, goes into the child's environment, so the credential is in
// no argv and no environment value that ps or /proc/PID/environ show.
package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/relayhq/relay/internal/statedir"
)

// FileEnv names the environment variable that holds the file's path.
const FileEnv = "RELAY_AGENT_FILE"

// File is the content of the identity file.
type File struct {
	// Name and Workspace are the agent's; SessionID its wrapper's.
	Name      string `json:"name"`
	Workspace string `json:"workspace"`
	SessionID string `json:"session_id,omitempty"`
	// Hub is the NATS URL; Token the agent's own credential (empty when the
	// hub issues none: an external server, or no hub reached yet); TLSPin
	// the hub's certificate for a local TLS hub; InboxPrefix the reply
	// subjects this credential may read.
	Hub         string `json:"hub,omitempty"`
	Token       string `json:"token,omitempty"`
	TLSPin      string `json:"tls_pin,omitempty"`
	InboxPrefix string `json:"inbox_prefix,omitempty"`
	// Socket is the wrapper's private socket: `relay send` goes through it,
	// so that the agent's own sends pass the same loop damping as its
	// @relay: lines.
	Socket string `json:"socket,omitempty"`
}

// ErrNoFile means the environment names no identity file: not inside a
// wrapped agent.
var ErrNoFile = errors.New("not inside a wrapped agent")

// Write writes f to path (0600) through a temporary file and a rename.
func Write(path string, f File) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write agent file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write agent file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write agent file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write agent file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write agent file: %w", err)
	}
	return nil
}

// Read reads the identity file that getenv(FileEnv) names; ErrNoFile when
// it names none. A file that is not the user's or that others can read is
// refused (statedir.ErrUnsafe).
func Read(getenv func(string) string) (File, error) {
	var f File
	path := getenv(FileEnv)
	if path == "" {
		return f, ErrNoFile
	}
	b, err := statedir.ReadSecret(path)
	if err != nil {
		return f, fmt.Errorf("read agent file ($%s): %w", FileEnv, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("read agent file %s: %w", path, err)
	}
	if f.Name == "" || f.Workspace == "" {
		return f, fmt.Errorf("read agent file %s: no agent name or workspace", path)
	}
	return f, nil
}
