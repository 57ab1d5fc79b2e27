package hub_test

import (
	"errors"
	"testing"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestDashboardIsRecordedAndItsPortRemembered(t *testing.T) {
	home := testutil.Home(t)
	h := start(t, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if p := h.LastDashboardPort(); p != 0 {
		t.Errorf("first run: LastDashboardPort = %d, want 0", p)
	}
	if _, _, err := hub.Dashboard(home); !errors.Is(err, hub.ErrNoDashboard) {
		t.Errorf("Dashboard before SetDashboard: %v, want ErrNoDashboard", err)
	}
	if err := h.SetDashboard("http://127.0.0.1:48123/"); err != nil {
		t.Fatal(err)
	}
	url, token, err := hub.Dashboard(home)
	if err != nil || url != "http://127.0.0.1:48123/" || token != h.Token() {
		t.Fatalf("Dashboard = %q, %q, %v; want the recorded URL and the hub's token", url, token, err)
	}
	if err := h.SetDashboard("::bad"); err == nil {
		t.Error("SetDashboard accepted a URL without a host")
	}
	h.Shutdown()
	if _, _, err := hub.Dashboard(home); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Dashboard after Shutdown: %v, want ErrNoHub", err)
	}
	h2 := start(t, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if p := h2.LastDashboardPort(); p != 48123 {
		t.Errorf("after a restart LastDashboardPort = %d, want 48123", p)
	}
	if _, _, err := hub.Dashboard(home); !errors.Is(err, hub.ErrNoDashboard) {
		t.Errorf("a restarted hub without a dashboard yet: %v, want ErrNoDashboard", err)
	}
}
