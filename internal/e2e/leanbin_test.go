package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// leanBuild is the lean relay pair the lean tests run, built once when
// the first of them asks (the other tests do not pay for it).
var leanBuild struct {
	once sync.Once
	bin  string // the lean relay; relay-hub beside it is relayBin
	err  error
}

// leanRelay returns a lean relay (tag lean, race-built) with the full
// binary beside it as relay-hub, as `make install` installs them. With
// RELAY_E2E_RELAY set it is that binary, which must have its relay-hub
// beside it (make build makes bin/relay and bin/relay-hub).
func leanRelay(t *testing.T) string {
	t.Helper()
	leanBuild.once.Do(func() {
		if os.Getenv(relayBinEnv) != "" {
			leanBuild.bin = relayBin
			if _, err := os.Stat(filepath.Join(filepath.Dir(relayBin), "relay-hub")); err != nil {
				leanBuild.err = fmt.Errorf("%s has no relay-hub beside it (make build makes both): %w", relayBinEnv, err)
			}
			return
		}
		dir := filepath.Join(runDir, "lean")
		if err := os.Mkdir(dir, 0o700); err != nil {
			leanBuild.err = err
			return
		}
		bin := filepath.Join(dir, "relay")
		build := exec.Command("go", "build", "-race", "-tags", "sqlite_fts5 lean", "-o", bin, "github.com/relayhq/relay/cmd/relay")
		if out, err := build.CombinedOutput(); err != nil {
			leanBuild.err = fmt.Errorf("build the lean relay: %w\n%s", err, out)
			return
		}
		if err := os.Symlink(relayBin, filepath.Join(dir, "relay-hub")); err != nil {
			leanBuild.err = err
			return
		}
		leanBuild.bin = bin
	})
	if leanBuild.err != nil {
		t.Fatal(leanBuild.err)
	}
	return leanBuild.bin
}
