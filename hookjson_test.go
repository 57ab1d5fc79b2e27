package relay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

// TestHookJSONCarriesRecent: every hook's JSON carries recent_output and
// recent_messages (empty lists, not null, when there are none), and a
// SessionEnd fired by relay stop says reason "stop".
func TestHookJSONCarriesRecent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "in.json")
	g := config.HookGroup{Hooks: []config.Hook{{Type: "command", Command: config.Command{Argv: []string{"sh", "-c", `cat > "$0"`, out}}}}}
	for _, tc := range []struct {
		name string
		e    EventInfo
		want map[string]any
	}{
		{"idle with context", EventInfo{Event: Idle, RecentOutput: []string{"build ok"}, RecentMessages: []Message{{ID: "m1", From: "Bob", To: "Alice", Body: "hi"}}},
			map[string]any{"recent_output": []any{"build ok"}}},
		{"none yet", EventInfo{Event: SessionStart}, map[string]any{"recent_output": []any{}, "recent_messages": []any{}}},
		{"stop", EventInfo{Event: SessionEnd, Stopping: true}, map[string]any{"reason": "stop", "subject": "stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := &hookSet{groups: map[config.Event][]config.HookGroup{config.Event(tc.e.Event): {g}}}
			if _, err := set.fire(context.Background(), tc.e); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if gb, _ := json.Marshal(got[k]); string(gb) != mustJSON(v) {
					t.Errorf("%s = %s, want %s (all: %s)", k, gb, mustJSON(v), b)
				}
			}
			if tc.e.RecentMessages != nil {
				msgs, _ := got["recent_messages"].([]any)
				if len(msgs) != 1 || !slices.Contains([]any{"hi"}, msgs[0].(map[string]any)["message"]) {
					t.Errorf("recent_messages = %v", got["recent_messages"])
				}
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
