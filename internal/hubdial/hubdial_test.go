package hubdial

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestHubToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    *Resolver
		want string
		err  bool
	}{
		{"none", &Resolver{}, "", false},
		{"environment over file", &Resolver{Token: "from-env", TokenFile: file}, "from-env", false},
		{"file, trimmed", &Resolver{TokenFile: file}, "from-file", false},
		{"missing file", &Resolver{TokenFile: filepath.Join(t.TempDir(), "none")}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.HubToken()
			if got != tt.want || (err != nil) != tt.err {
				t.Fatalf("HubToken = %q, %v; want %q, error %v", got, err, tt.want, tt.err)
			}
		})
	}
	t.Run("read once", func(t *testing.T) {
		r := &Resolver{TokenFile: file}
		if _, err := r.HubToken(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte("changed"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.HubToken(); got != "from-file" {
			t.Fatalf("second HubToken = %q, want the first read's from-file", got)
		}
	})
}

func TestOptions(t *testing.T) {
	home := testutil.Home(t)
	r := &Resolver{Home: home}
	if _, err := r.Options(); !errors.Is(err, hub.ErrNoHub) {
		t.Fatalf("Options without a hub: %v, want ErrNoHub", err)
	}
	h, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	ep := h.Endpoint()

	o, err := r.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.URL != ep.URL || o.Token != ep.Token || o.Discover == nil {
		t.Fatalf("local options %+v, want the hub's endpoint %+v and Discover", o, ep)
	}
	if url, err := o.Discover(); err != nil || url != ep.URL {
		t.Fatalf("Discover = %q, %v; want %q", url, err, ep.URL)
	}

	t.Run("external is the local hub", func(t *testing.T) {
		o, err := (&Resolver{Home: home, URL: ep.URL}).Options()
		if err != nil || o.Token != ep.Token || o.Discover != nil {
			t.Fatalf("Options = %+v, %v; want the local hub's token, no Discover", o, err)
		}
	})
	t.Run("external with its own token", func(t *testing.T) {
		o, err := (&Resolver{Home: home, URL: ep.URL, Token: "mine", TLSCA: "ca.pem"}).Options()
		if err != nil || o.Token != "mine" || o.TLSCA != "ca.pem" {
			t.Fatalf("Options = %+v, %v; want token mine, TLSCA ca.pem", o, err)
		}
	})
	t.Run("external elsewhere", func(t *testing.T) {
		o, err := (&Resolver{Home: home, URL: "nats://127.0.0.1:1"}).Options()
		if err != nil || o.Token != "" {
			t.Fatalf("Options = %+v, %v; want no token", o, err)
		}
	})
}
