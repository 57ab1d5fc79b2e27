package cli

import (
	"strings"
	"testing"
)

// TestCommandHelp: relay help CMD and relay CMD -h print that command's
// usage on stdout, with the configuration keys it reads, and exit 0.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"help", "wrap"}, []string{"Usage: relay wrap", "-delivery", "delivery.mode", "hooks.EVENT", "RELAY_NAME"}},
		{[]string{"wrap", "-h"}, []string{"Usage: relay wrap", "damping.max_hops", "patterns.NAME"}},
		{[]string{"wrap", "--name", "x", "--help"}, []string{"Usage: relay wrap"}},
		{[]string{"help", "send"}, []string{"Usage: relay send", "hub.url", "RELAY_TOKEN"}},
		{[]string{"log", "-h"}, []string{"Usage: relay log", "hub.token_file"}},
		{[]string{"help", "config"}, []string{"Usage: relay config", "every key"}},
		{[]string{"help"}, []string{"Usage: relay COMMAND", "relay help COMMAND"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runConfigCLI(t, nil, tc.args...)
			if code != ExitOK || stderr != "" {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
	if code, _, stderr := runConfigCLI(t, nil, "help", "frob"); code != ExitUsage || !strings.Contains(stderr, `unknown command "frob"`) {
		t.Errorf("relay help frob: exit %d, %q", code, stderr)
	}
}

// TestFlagMistakeUsage: after a flag mistake the usage goes to stderr with
// the complaint, and the exit status is 2.
func TestFlagMistakeUsage(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runConfigCLI(t, nil, "send", "--frob")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "flag provided but not defined: -frob") || !strings.Contains(stderr, "Usage: relay send") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}
