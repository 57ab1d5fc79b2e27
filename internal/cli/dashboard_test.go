package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// dashboardCmd runs `relay dashboard ARGS` in c's home (called directly:
// the command table belongs to cli.go).
func (c *hubCLI) dashboardCmd(args ...string) (string, error) {
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }, Executable: c.exe}
	err := runDashboard(context.Background(), env, args)
	return out.String(), err
}

func TestUpServesTheDashboardAndRelayDashboardPrintsIt(t *testing.T) {
	c := newHubCLI(t)
	if _, err := c.dashboardCmd(); !errors.Is(err, hub.ErrNoHub) || !strings.Contains(err.Error(), "relay up") {
		t.Errorf("relay dashboard without a hub: %v, want ErrNoHub and a hint", err)
	}
	out := c.must("up", "--detach")
	if !strings.Contains(out, "\ndashboard on http://127.0.0.1:") {
		t.Fatalf("up --detach printed %q, want the dashboard's address", out)
	}
	printed, err := c.dashboardCmd()
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := hub.Discover(c.home)
	token := ep.Token
	open := strings.TrimSpace(printed)
	if !strings.HasPrefix(open, "http://127.0.0.1:") || !strings.HasSuffix(open, "/?token="+token) {
		t.Fatalf("relay dashboard printed %q, want the loopback URL with the token", printed)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(open)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Errorf("GET the printed URL: %d with cookies %v, want 303 and the session cookie", resp.StatusCode, resp.Cookies())
	}
	js, err := c.dashboardCmd("--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		URL     string `json:"url"`
		OpenURL string `json:"open_url"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || got.OpenURL != open || !strings.HasSuffix(got.URL, "/") {
		t.Errorf("relay dashboard --json printed %q (%v)", js, err)
	}
	firstURL := strings.TrimSuffix(open, "?token="+token)

	// A restarted hub keeps the dashboard's port; --dashboard off has none.
	c.must("down")
	c.must("up", "--detach")
	if again, _, err := hub.Dashboard(c.home); err != nil || again != firstURL {
		t.Errorf("after a restart the dashboard is at %q (%v), want %q again", again, err, firstURL)
	}
	c.must("down")
	if out := c.must("up", "--detach", "--dashboard", "off"); strings.Contains(out, "dashboard on") {
		t.Errorf("up --dashboard off printed %q", out)
	}
	if _, err := c.dashboardCmd(); !errors.Is(err, hub.ErrNoDashboard) {
		t.Errorf("relay dashboard with --dashboard off: %v, want ErrNoDashboard", err)
	}
}

func TestUpForegroundDashboardFlag(t *testing.T) {
	c := newHubCLI(t)
	for _, tc := range []struct{ addr, want string }{
		{"0.0.0.0:8080", "not loopback"},
		{"nonsense", "HOST:PORT"},
	} {
		code, _, errs := c.run("", "up", "--dashboard", tc.addr)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("up --dashboard %s: exit %d, stderr %q; want 2 and %q", tc.addr, code, errs, tc.want)
		}
	}
	var hubOut testutil.Buffer
	up := c.startRelay(&hubOut, "up", "--dashboard", "127.0.0.1:0")
	waitOutput(t, &hubOut, "dashboard on http://127.0.0.1:")
	if _, err := c.dashboardCmd(); err != nil {
		t.Errorf("relay dashboard beside a foreground hub: %v", err)
	}
	if err := up.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := up.Wait(); err != nil {
		t.Errorf("up after SIGTERM: %v\n%s", err, hubOut.String())
	}
}
