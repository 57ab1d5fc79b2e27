//go:build !lean

package natscreds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/jwt/v2"

	"github.com/relayhq/relay/bus"
)

// ErrPushRefused is returned by Push when a server refused the account.
var ErrPushRefused = errors.New("server refused the account update")

// Push hands relay's account JWT from dir to the running servers reached
// at url (TLS as o says), as the system account's user: each server of a
// cluster updates the account, and closes the connections of the users it
// now revokes. A server restarted later reads the include instead.
func Push(ctx context.Context, dir string, o bus.Options) error {
	b, err := os.ReadFile(filepath.Join(dir, AccountJWT))
	if err != nil {
		return fmt.Errorf("read account: %w", err)
	}
	accJWT := strings.TrimSpace(string(b))
	ac, err := jwt.DecodeAccountClaims(accJWT)
	if err != nil {
		return fmt.Errorf("read account: %w", err)
	}
	o.Token, o.Creds = "", filepath.Join(dir, SystemCreds)
	nc, err := bus.Dial(ctx, o, "relay-creds")
	if err != nil {
		return err
	}
	defer nc.Close()
	m, err := nc.RequestWithContext(ctx, "$SYS.REQ.ACCOUNT."+ac.Subject+".CLAIMS.UPDATE", []byte(accJWT))
	if err != nil {
		return fmt.Errorf("push account to %s: %w", o.URL, err)
	}
	var r struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return fmt.Errorf("push account to %s: bad answer %q: %w", o.URL, m.Data, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%w: %s", ErrPushRefused, r.Error.Description)
	}
	return nil
}
