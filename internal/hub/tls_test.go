package hub_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestTLSHubIsFoundQuietly: a TLS hub records the pin of its certificate
// for local clients, and Discover's probe finishes the handshake, so that
// the hub's log does not fill with a failed handshake per probe.
func TestTLSHubIsFoundQuietly(t *testing.T) {
	files := testutil.TLS(t, "hub.example.test")
	home := testutil.Home(t)
	var log testutil.Buffer
	h, err := hub.Start(context.Background(), hub.Options{
		Home: home, Listen: "0.0.0.0:0", TLSCert: files.Cert, TLSKey: files.Key,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	for range 3 {
		ep, err := hub.Discover(home)
		if err != nil || ep != h.Endpoint() || len(ep.TLSPin) != 64 || !strings.HasPrefix(ep.URL, "tls://127.0.0.1:") {
			t.Fatalf("Discover = %+v, %v; want %+v with a pin", ep, err, h.Endpoint())
		}
	}
	h.Shutdown()
	// A probe whose handshake the server was still finishing when it shut
	// down is cut off by the shutdown ("use of closed network connection"):
	// that is not a probe's fault. A probe that hangs up mid-handshake
	// leaves "EOF" or "first record does not look like a TLS handshake".
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "handshake") && !strings.Contains(line, "use of closed network connection") {
			t.Errorf("a probe left an error in the hub's log: %s\nwhole log:\n%s", line, log.String())
		}
	}
}
