package bus_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestTLSTrust: a hub with a certificate from a private CA for the name
// "localhost". A client trusts it by that CA and name, or by the pin the hub
// recorded (dialling 127.0.0.1, as a local client does); anything else is
// refused with ErrUntrustedHub and a hint at the fix.
func TestTLSTrust(t *testing.T) {
	files := testutil.TLS(t, "localhost")
	h, err := hub.Start(context.Background(), hub.Options{Home: testutil.Home(t), Listen: "127.0.0.1:0", TLSCert: files.Cert, TLSKey: files.Key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	ep := h.Endpoint()
	if !strings.HasPrefix(ep.URL, "tls://127.0.0.1:") {
		t.Fatalf("TLS hub at %s", ep.URL)
	}
	if want := bus.CertPin(certDER(t, files.Cert)); ep.TLSPin != want {
		t.Fatalf("hub pin %q, want the SHA-256 of its certificate %q", ep.TLSPin, want)
	}
	u, _ := url.Parse(ep.URL)
	byName := "tls://localhost:" + u.Port()
	otherPin := bus.CertPin(certDER(t, files.CA))

	for _, tc := range []struct {
		name string
		o    bus.Options
		want string // "" connects
	}{
		{"CA and name", bus.Options{URL: byName, TLSCA: files.CA}, ""},
		{"pin", bus.Options{URL: ep.URL, TLSPin: ep.TLSPin}, ""},
		{"pin wins over a wrong CA", bus.Options{URL: ep.URL, TLSPin: ep.TLSPin, TLSCA: files.Cert}, ""},
		{"no CA", bus.Options{URL: byName}, "hub.tls_ca, RELAY_TLS_CA or --tls-ca"},
		{"CA but not the name", bus.Options{URL: ep.URL, TLSCA: files.CA}, "by a name its certificate holds"},
		{"another pin", bus.Options{URL: ep.URL, TLSPin: otherPin}, "not the one the hub recorded"},
		{"plain nats", bus.Options{URL: strings.Replace(ep.URL, "tls:", "nats:", 1), TLSPin: ep.TLSPin}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Token, tc.o.Name = ep.Token, strings.ReplaceAll(tc.name, " ", "-")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := bus.Connect(ctx, tc.o)
			nc, derr := bus.Dial(ctx, tc.o, "test")
			if tc.want == "" {
				if err != nil || derr != nil {
					t.Fatalf("Connect: %v; Dial: %v", err, derr)
				}
				defer c.Close()
				defer nc.Close()
				if err := c.Register(ctx); err != nil {
					t.Errorf("register: %v", err)
				}
				if _, err := c.Send(ctx, "bob", "over TLS"); !errors.Is(err, bus.ErrUnknownAgent) {
					t.Errorf("send: %v, want it stored for bob (ErrUnknownAgent)", err)
				}
				if err := nc.Flush(); err != nil {
					t.Errorf("bare connection: %v", err)
				}
				return
			}
			for what, err := range map[string]error{"Connect": err, "Dial": derr} {
				if !errors.Is(err, bus.ErrUntrustedHub) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v; want ErrUntrustedHub saying %q", what, err, tc.want)
				}
			}
			if c != nil {
				c.Close()
			}
			if nc != nil {
				nc.Close()
			}
		})
	}
}

func certDER(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", path)
	}
	if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
		t.Fatal(err)
	}
	return blk.Bytes
}
