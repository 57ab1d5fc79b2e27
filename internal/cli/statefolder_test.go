package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// knownToken is the value an attacker planted and hopes the hub adopts.
const knownToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// plant prepares c.home as another user would: the folder with mode
// dirMode, and a token file with the known value and mode tokenMode.
func plant(t *testing.T, c *hubCLI, dirMode, tokenMode os.FileMode) (tokenPath string) {
	t.Helper()
	if err := os.MkdirAll(hub.Dir(c.home), 0o700); err != nil {
		t.Fatal(err)
	}
	tokenPath = filepath.Join(hub.Dir(c.home), "token")
	if err := os.WriteFile(tokenPath, []byte(knownToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for p, m := range map[string]os.FileMode{tokenPath: tokenMode, c.home: dirMode} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	return tokenPath
}

// checkKnownTokenRefused fails when a client with the planted token gets
// into a hub running for c.home.
func checkKnownTokenRefused(t *testing.T, c *hubCLI) {
	t.Helper()
	ep, err := hub.Discover(c.home)
	if err != nil {
		return // no hub: nobody gets in
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cl, err := bus.Connect(ctx, bus.Options{URL: ep.URL, Token: knownToken, Name: "mallory"}); err == nil {
		cl.Close()
		t.Fatalf("a client with the planted token got into the hub at %s", ep.URL)
	}
}

// TestPreparedStateFolderIsRefused plays a user who prepared RELAY_HOME
// for their victim: every command that uses the folder refuses it, says
// what is wrong and how to fix it, and no hub ever runs on the planted
// token.
func TestPreparedStateFolderIsRefused(t *testing.T) {
	commands := [][]string{
		{"up", "--detach"},
		{"wrap", "--name", "alice", "--", "true"},
		{"send", "bob", "hi"},
		{"down"},
		{"memory", "list"},
	}
	tests := []struct {
		name               string
		dirMode, tokenMode os.FileMode
		want               string // in every refusal; DIR is the folder
	}{
		{"folder 0777", 0o777, 0o600, "can be written by others (mode 0777)"},
		{"token 0644", 0o700, 0o644, "can be read or written by others (mode 0644)"},
		{"token not written by relay", 0o700, 0o600, "has no hub.json beside it: relay did not write it"},
	}
	fixes := map[string]string{
		"folder 0777":                "fix: chmod 700 DIR",
		"token 0644":                 "fix: rm DIR/hub/token",
		"token not written by relay": "fix: rm DIR/hub/token",
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newHubCLI(t)
			plant(t, c, tc.dirMode, tc.tokenMode)
			for _, args := range commands {
				if tc.name != "folder 0777" && args[0] != "up" {
					// A bad token alone is met when a hub starts: relay wrap
					// starts it through hub.EnsureRunning, which checks it as
					// up --detach does (hub's TestEnsureRunningRefusesAPlantedToken).
					continue
				}
				code, out, errs := c.run("", args...)
				fix := strings.ReplaceAll(fixes[tc.name], "DIR", c.home)
				if code == 0 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, fix) {
					t.Errorf("relay %s: exit %d\nstdout: %s\nstderr: %s\nwant a failure saying %q and %q", strings.Join(args, " "), code, out, errs, tc.want, fix)
				}
				checkKnownTokenRefused(t, c)
			}
		})
	}

	t.Run("after the fix the hub starts with a token of its own", func(t *testing.T) {
		c := newHubCLI(t)
		tokenPath := plant(t, c, 0o777, 0o644)
		if err := os.Chmod(c.home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(tokenPath); err != nil {
			t.Fatal(err)
		}
		c.must("up", "--detach")
		ep, err := hub.Discover(c.home)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Token == knownToken || len(ep.Token) != 64 {
			t.Fatalf("hub runs on token %q", ep.Token)
		}
		checkKnownTokenRefused(t, c)
		c.must("down")
		c.must("up", "--detach") // its own token is kept across restarts
		if ep2, err := hub.Discover(c.home); err != nil || ep2.Token != ep.Token {
			t.Fatalf("after a restart: token %q, %v; want the one it wrote", ep2.Token, err)
		}
	})

	t.Run("a token swapped behind the hub's back is refused", func(t *testing.T) {
		c := newHubCLI(t)
		c.must("up", "--detach")
		c.must("down")
		tokenPath := filepath.Join(hub.Dir(c.home), "token")
		if err := os.WriteFile(tokenPath, []byte(knownToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errs := c.run("", "up", "--detach")
		if code == 0 || !strings.Contains(errs, "does not match the token relay recorded in hub.json") || !strings.Contains(errs, "rm "+tokenPath) {
			t.Fatalf("up with a swapped token: exit %d, stderr %s", code, errs)
		}
		checkKnownTokenRefused(t, c)
	})

	t.Run("folder of another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give the folder to user nobody (chown); not root here")
		}
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("no user nobody: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c := newHubCLI(t)
		tokenPath := plant(t, c, 0o777, 0o644)
		for _, p := range []string{c.home, hub.Dir(c.home), tokenPath} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range commands {
			code, out, errs := c.run("", args...)
			if code == 0 || !strings.Contains(errs, "belongs to nobody") || !strings.Contains(errs, "fix: ") {
				t.Errorf("relay %s: exit %d\nstdout: %s\nstderr: %s\nwant a refusal naming nobody and a fix", strings.Join(args, " "), code, out, errs)
			}
			checkKnownTokenRefused(t, c)
		}
		// doctor reports it with the same fix instead of failing outright.
		_, out, _ := c.run("", "doctor", "--json")
		var rep doctorReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		if len(rep.Checks) == 0 || rep.Checks[0].OK || !strings.Contains(rep.Checks[0].Fix, "chown -R") {
			t.Errorf("doctor's state folder check: %+v", rep.Checks)
		}
	})
}
