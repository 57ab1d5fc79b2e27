package mockmodel

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestToolNames(t *testing.T) {
	for _, c := range []struct {
		name, tools string
		want        []string
	}{
		{"anthropic", `[{"name":"Bash","input_schema":{}},{"name":"mcp__relay__send"}]`, []string{"Bash", "mcp__relay__send"}},
		{"responses", `[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__relay__","tools":[{"type":"function","name":"send"}]}]`, []string{"exec_command", "mcp__relay__/send"}},
		{"gemini", `[{"functionDeclarations":[{"name":"run_shell_command"},{"name":"send"}]}]`, []string{"run_shell_command", "send"}},
		{"junk", `[1, "x", {"name": 3}]`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var raw []json.RawMessage
			if err := json.Unmarshal([]byte(c.tools), &raw); err != nil {
				t.Fatal(err)
			}
			if got := toolNames(raw); !slices.Equal(got, c.want) {
				t.Errorf("toolNames = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	in := map[string]any{"to": "Bob"}
	direct := Request{Tools: []string{"Bash", "mcp__relay__send"}}
	if r, ok := CallTool(direct, "hi", "__send", in); !ok || r.ToolUse.Name != "mcp__relay__send" || r.Text != "hi" {
		t.Errorf("offered tool: %+v, %v", r, ok)
	}
	deferred := Request{Tools: []string{"Bash", ToolSearch}}
	if r, ok := CallTool(deferred, "", "mcp__relay__send", in); !ok || r.ToolUse.Name != ToolSearch || r.ToolUse.Input["query"] != "select:mcp__relay__send" {
		t.Errorf("deferred tool: %+v, %v", r, ok)
	}
	if _, ok := CallTool(Request{Tools: []string{"Bash"}}, "", "send", in); ok {
		t.Error("a tool that is not offered was called")
	}
}
