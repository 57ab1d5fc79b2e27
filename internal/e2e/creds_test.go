package e2e

import (
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWrapUsesRELAY_CREDS: relay wrap authenticates with the credentials
// file RELAY_CREDS names, as relay send does (it used to ignore it): here a
// file that is missing, which the join's error names.
func TestWrapUsesRELAY_CREDS(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there: the credentials are read first
	creds := filepath.Join(t.TempDir(), "bob.creds")
	cmd := exec.Command(relayBin, "wrap", "--name", "Bob", "--", "true")
	cmd.Env = env(t, "RELAY_HUB=nats://"+addr, "RELAY_CREDS="+creds)
	out, err := runWithin(t, cmd, 30*time.Second)
	if err != nil {
		t.Fatalf("relay wrap: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), creds) {
		t.Errorf("relay wrap did not use RELAY_CREDS=%s:\n%s", creds, out)
	}
}
