package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

// TestDeliveryModeFileAndFlagAgree: a configuration file's delivery.mode
// and relay wrap's --delivery accept the same names (issue 33: the file
// refused "Batch", the flag took it), through delivery.ParseMode.
func TestDeliveryModeFileAndFlagAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spelled string
		ok      bool
	}{
		{"batch", true}, {"wait", true}, {"queue", true}, {"followUp", true}, {"steer", true},
		{"Batch", false}, {"WAIT", false}, {"followup", false}, {" steer", false}, {"later", false},
	} {
		t.Run(tc.spelled, func(t *testing.T) {
			t.Parallel()
			var errb bytes.Buffer
			_, flagErr := parseWrap(&Env{Stderr: &errb, Getenv: func(string) string { return "" }},
				[]string{"--delivery", tc.spelled, "--", "sh"})
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
				t.Fatal(err)
			}
			toml := "[delivery]\nmode = '" + tc.spelled + "'\n"
			if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(toml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, fileErr := config.Load(config.Sources{ProjectDir: dir, Env: func(string) string { return "" }})
			if (flagErr == nil) != tc.ok || (fileErr == nil) != tc.ok {
				t.Errorf("mode %q: --delivery gives %v, the file %v; want both accepted: %v", tc.spelled, flagErr, fileErr, tc.ok)
			}
		})
	}
}
