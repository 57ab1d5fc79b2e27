package cli

import (
	"net/url"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestHubOverTLS: `relay up` with a certificate from the team's private CA
// for the machine's public name (here "localhost"). On the hub's machine,
// every command finds it through RELAY_HOME and trusts the certificate the
// hub recorded; from another machine, a command dials it by that name and
// trusts it once it is given the CA, and says how when it is not.
func TestHubOverTLS(t *testing.T) {
	files := testutil.TLS(t, "localhost")
	c := newHubCLI(t)
	out := c.must("up", "--detach", "--listen", "0.0.0.0:0", "--tls-cert", files.Cert, "--tls-key", files.Key)
	if !strings.HasPrefix(out, "relay hub running on tls://127.0.0.1:") || !strings.Contains(out, "dashboard on http://127.0.0.1:") {
		t.Fatalf("up --detach printed %q", out)
	}
	ep, err := hub.Discover(c.home)
	if err != nil || ep.TLSPin == "" {
		t.Fatalf("Discover = %+v, %v; want a TLS hub with a pin", ep, err)
	}

	// The hub's machine: no CA needed.
	if out := c.must("send", "bob", "sent", "on", "the", "hub's", "machine"); !strings.HasPrefix(out, "sent ") {
		t.Errorf("send printed %q", out)
	}
	c.must("memory", "save", "the staging database is read-only on Fridays")
	if code, out, errs := c.run("", "doctor"); code != 0 || !regexpLine(out, `^ok\s+hub\s+tls://127\.0\.0\.1:\d+ reachable`) ||
		!regexpLine(out, `^ok\s+memory\s+the memory service answers`) {
		t.Errorf("doctor: exit %d\n%s%s", code, out, errs)
	}

	// Another machine: RELAY_HUB by the certificate's name, and the token.
	u, _ := url.Parse(ep.URL)
	remote := newHubCLI(t)
	remote.vars["RELAY_HUB"] = "tls://localhost:" + u.Port()
	remote.vars["RELAY_TOKEN"] = ep.Token
	code, _, errs := remote.run("", "send", "bob", "hi")
	if code != 1 || !strings.Contains(errs, "not trusted") || !strings.Contains(errs, "hub.tls_ca, RELAY_TLS_CA or --tls-ca") {
		t.Errorf("send without the CA: exit %d, stderr %q; want 1 and how to give the CA", code, errs)
	}
	code, _, errs = remote.run("", "send", "--tls-ca", files.Cert+".missing", "bob", "hi")
	if code != ExitUsage || !strings.Contains(errs, "--tls-ca: "+files.Cert+".missing does not exist") {
		t.Errorf("send with a missing CA file: exit %d, stderr %q", code, errs)
	}
	code, _, errs = remote.run("", "send", "--tls-ca", files.Key, "bob", "hi")
	if code != ExitUsage || !strings.Contains(errs, "holds no PEM certificate") {
		t.Errorf("send with a key as the CA: exit %d, stderr %q", code, errs)
	}
	if code, out, _ := remote.run("", "doctor"); code != 1 || !regexpLine(out, `^FAIL\s+hub\s+connect to hub tls://localhost:\d+: hub's TLS certificate not trusted: .*signed by unknown authority$`) ||
		!strings.Contains(out, "fix: give the CA that signed the hub's certificate with hub.tls_ca or RELAY_TLS_CA") {
		t.Errorf("doctor without the CA: exit %d\n%s", code, out)
	}
	remote.vars["RELAY_TLS_CA"] = files.CA
	remote.must("send", "--from", "carol", "bob", "sent", "from", "another", "machine")
	out = remote.must("log")
	if !strings.Contains(out, "tester -> bob") || !strings.Contains(out, "carol -> bob") {
		t.Errorf("log from another machine:\n%s", out)
	}
	if out := remote.must("memory", "search", "staging"); !strings.Contains(out, "read-only on Fridays") {
		t.Errorf("memory search from another machine:\n%s", out)
	}

	// By an address the certificate does not hold, even with the CA.
	remote.vars["RELAY_HUB"] = ep.URL
	code, _, errs = remote.run("", "agents")
	if code != 1 || !strings.Contains(errs, "by a name its certificate holds") {
		t.Errorf("agents by 127.0.0.1: exit %d, stderr %q", code, errs)
	}
	c.must("down")
}
