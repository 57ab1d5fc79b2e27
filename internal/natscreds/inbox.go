package natscreds

import (
	"os"
	"strings"

	"github.com/nats-io/jwt/v2"
)

// InboxPrefix returns the reply-subject prefix the user in the .creds file
// at path may read (hub.AgentInboxPrefix, as Issue grants it), or "" when
// the file cannot be read or grants none (an administrator's, another
// tool's): a client connecting with an agent's credentials must use it
// (bus.Options.InboxPrefix), or no answer from the server reaches it.
func InboxPrefix(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	token, err := jwt.ParseDecoratedJWT(b)
	if err != nil {
		return ""
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return ""
	}
	for _, s := range uc.Sub.Allow {
		if p, ok := strings.CutSuffix(s, ".>"); ok && strings.HasPrefix(p, "_RELAY_INBOX.") {
			return p
		}
	}
	return ""
}
