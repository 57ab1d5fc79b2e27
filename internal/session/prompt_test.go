package session

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/delivery"
)

// TestPromptTypedOnce: Config.Prompt (a team file's prompt) is typed when
// the agent is first ready, in relay's own words, and never again at its
// later idle moments.
func TestPromptTypedOnce(t *testing.T) {
	const prompt = "You review every change Bob makes."
	r := startRig(t, Config{Prompt: prompt})
	r.s.read(func(*state) {})
	if typed := r.ty.String(); typed != "" {
		t.Fatalf("typed before the agent was ready: %q", typed)
	}
	r.screenBusy(false)
	r.waitTyped(t, prompt)
	r.screenBusy(true)
	r.screenBusy(false)
	r.s.read(func(*state) { r.s.ownNote("marker") })
	r.waitTyped(t, "marker")
	if n := strings.Count(r.ty.String(), delivery.ShellText(prompt)); n != 1 {
		t.Errorf("the prompt was typed %d times:\n%s", n, r.ty.String())
	}
	if !strings.Contains(r.ty.String(), "[relay] "+delivery.ShellText(prompt)) {
		t.Errorf("not typed as relay's own note:\n%s", r.ty.String())
	}
}
