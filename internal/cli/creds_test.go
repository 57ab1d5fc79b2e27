package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/natscreds"
)

// TestCredsCommands: relay creds init, issue, list and revoke without a
// server; the folder defaults to RELAY_HOME/creds; mistakes are usage
// errors or say what is missing.
func TestCredsCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	vars := map[string]string{"RELAY_HOME": home, "RELAY_WORKSPACE": "team"}
	dir := filepath.Join(home, "creds")
	out := filepath.Join(t.TempDir(), "bob.creds")
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a part of it
		stderr string
	}{
		{args: []string{"creds"}, code: ExitUsage, stderr: "sub-command"},
		{args: []string{"creds", "issue", "Bob", "--out", out}, code: 1, stderr: "relay creds init first"},
		{args: []string{"creds", "init"}, stdout: "include relay-server.conf"},
		{args: []string{"creds", "init"}, code: 1, stderr: "already initialised"},
		{args: []string{"creds", "issue", "Bob"}, code: ExitUsage, stderr: "--out FILE"},
		{args: []string{"creds", "issue", "--out", out}, code: ExitUsage, stderr: "NAME"},
		{args: []string{"creds", "issue", "bad.name", "--out", out}, code: ExitUsage, stderr: "bad name"},
		{args: []string{"creds", "issue", "Bob", "--out", out}, stdout: "RELAY_CREDS=" + out},
		{args: []string{"creds", "list"}, stdout: "team       Bob"},
		{args: []string{"creds", "revoke", "Carol"}, code: 1, stderr: "no such user"},
		{args: []string{"creds", "revoke", "Bob"}, stdout: "restart the servers"},
		{args: []string{"creds", "list"}, stdout: "revoked"},
	} {
		code, stdout, stderr := runCLIEnv(vars, "", tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("relay %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.code, stdout, stderr)
		}
	}
	for _, f := range []string{filepath.Join(dir, natscreds.OperatorSeed), filepath.Join(dir, natscreds.AccountSeed), out} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want a 0700 folder", dir, fi, err)
	}
	if p := natscreds.InboxPrefix(out); p != "_RELAY_INBOX.team.Bob" {
		t.Errorf("the creds' reply prefix is %q", p)
	}
	b, err := os.ReadFile(filepath.Join(dir, natscreds.Include))
	if err != nil || !strings.Contains(string(b), "resolver: MEMORY") {
		t.Errorf("include: %s, %v", b, err)
	}
}
