package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestCustomMemoryBackend: examples/custommemory, a Go program that gives
// relay.Options.Memory a store of its own, answers the wrapped agent's
// @memory: verbs from it, with no hub at all.
func TestCustomMemoryBackend(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "custommemory")
	build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, "github.com/relayhq/relay/examples/custommemory")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/custommemory: %v\n%s", err, out)
	}
	agent := ptytest.Start(t, ptytest.Options{Env: env(t)}, append([]string{bin, "--"},
		script("@memory:save we deploy with ArgoCD #ops", "@memory:search argocd")...)...)
	// The backend's own ids (n…), not the hub's store: RELAY_HUB=none. A
	// shell is typed its text with brackets and line breaks as %XX
	// (delivery.ShellText).
	agent.WaitOutput("got:  # [relay] memory saved as %5Bn0000001%5D", 20*time.Second)
	agent.WaitOutput("got:  # [relay] memory search %22argocd%22: 1 result%0A- %5Bn0000001%5D we deploy with ArgoCD", 20*time.Second)
}
