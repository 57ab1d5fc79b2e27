package bus

import (
	"errors"
	"fmt"
)

// MaxNameLen is the longest agent or workspace name.
const MaxNameLen = 64

// Broadcast is the target that means every other agent of the workspace.
const Broadcast = "*"

// DefaultWorkspace is the workspace of agents that name none.
const DefaultWorkspace = "default"

// ErrBadName is wrapped by errors about agent, workspace and message id
// names that cannot be NATS subject tokens.
var ErrBadName = errors.New("bad name")

// ValidName checks an agent or workspace name: 1 to 64 ASCII letters,
// digits, '_' and '-', starting with a letter or a digit. Such a name is one
// safe NATS subject token and a valid JetStream stream, consumer and key
// name. what ("agent", "workspace") goes into the error.
func ValidName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%w: %s name is empty", ErrBadName, what)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %s name %.20q… is %d bytes long, at most %d are allowed", ErrBadName, what, name, len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAlnum(c) || (i > 0 && (c == '_' || c == '-')) {
			continue
		}
		return fmt.Errorf("%w: %s name %q has %q at byte %d: use letters, digits, '_' and '-' (starting with a letter or digit)",
			ErrBadName, what, name, rune(c), i)
	}
	return nil
}

// SafeName turns s (a login name, a command) into a valid name, replacing
// every other character with '-'; it returns fallback when nothing is left.
func SafeName(s, fallback string) string {
	b := []byte(s)
	if len(b) > MaxNameLen {
		b = b[:MaxNameLen]
	}
	for i, c := range b {
		if !isAlnum(c) && c != '_' && c != '-' {
			b[i] = '-'
		}
	}
	for len(b) > 0 && !isAlnum(b[0]) {
		b = b[1:]
	}
	if len(b) == 0 {
		return fallback
	}
	return string(b)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Subjects, streams and buckets of one workspace (see docs/protocol.md).

// InboxSubject is where messages to agent wait: relay.<workspace>.inbox.<agent>.
func InboxSubject(workspace, agent string) string {
	return "relay." + workspace + ".inbox." + agent
}

// SenderInboxSubject is where agent from sends to agent to:
// relay.<workspace>.inbox.<to>.<from>. The sender's name is in the subject
// so that the server's permissions can bind it to a credential: an agent's
// own credential may publish only with its own name there, and the
// recipient refuses an envelope whose from is not that name. InboxSubject
// (no sender) is for the administrator's token: humans, scripts, the nats
// CLI.
func SenderInboxSubject(workspace, to, from string) string {
	return InboxSubject(workspace, to) + "." + from
}

// ReceiptSubject carries the receipts of message id: relay.<workspace>.receipt.<id>.
func ReceiptSubject(workspace, id string) string {
	return "relay." + workspace + ".receipt." + id
}

// StreamName is the JetStream stream holding a workspace's messages and
// receipts: RELAY_<workspace>.
func StreamName(workspace string) string { return "RELAY_" + workspace }

// PresenceBucket is the JetStream key-value bucket of a workspace's agents:
// relay_presence_<workspace>, one key per agent.
func PresenceBucket(workspace string) string { return "relay_presence_" + workspace }
