package mockmodel_test

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/testing/mockmodel"
)

func TestChatStreamToolCallAndSideRequests(t *testing.T) {
	t.Parallel()
	m := mockmodel.NewChat(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "Hi there, pi.", Chunk: 5},
		mockmodel.Reply{Text: "Running.", ToolUse: &mockmodel.ToolUse{Name: "bash", Input: map[string]any{"command": "true"}}},
	)})
	defer m.Close()
	tools := `"tools":[{"type":"function","function":{"name":"bash","parameters":{}}}]`

	cases := []struct {
		name, body, text, finish string
		tool                     bool
	}{
		{"text", `{"model":"mock-model","stream":true,"stream_options":{"include_usage":true},` + tools + `,"messages":[
			{"role":"system","content":"rules"},{"role":"user","content":[{"type":"text","text":"say hi"}]}]}`, "Hi there, pi.", "stop", false},
		{"tool call", `{"model":"mock-model","stream":true,` + tools + `,"messages":[{"role":"user","content":"run it"}]}`, "Running.", "tool_calls", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := post(t, m.URL+"/v1/chat/completions", c.body)
			if evs[len(evs)-1].Name != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %v", evs[len(evs)-1])
			}
			var text, finish string
			var tool bool
			for _, e := range evs {
				choices, _ := e.Data["choices"].([]any)
				for _, ch := range choices {
					ch := ch.(map[string]any)
					d := ch["delta"].(map[string]any)
					if s, ok := d["content"].(string); ok {
						text += s
					}
					if _, ok := d["tool_calls"]; ok {
						tool = true
					}
					if f, ok := ch["finish_reason"].(string); ok {
						finish = f
					}
				}
			}
			if text != c.text || finish != c.finish || tool != c.tool {
				t.Errorf("text %q, finish %q, tool call %v; want %q, %q, %v", text, finish, tool, c.text, c.finish, c.tool)
			}
		})
	}
	// A request without tools (OpenCode's title) is a side request,
	// answered whole when not streamed.
	evs := post(t, m.URL+"/v1/chat/completions", `{"model":"mock-model","messages":[{"role":"user","content":"Generate a title for this conversation"}]}`)
	msg := evs[0].Data["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "Mock session" {
		t.Errorf("title answer = %v", msg)
	}
	if n, all := len(m.Turns()), len(m.All()); n != 2 || all != 3 {
		t.Errorf("turns = %d of %d requests, want 2 of 3", n, all)
	}
	if got := m.Turns()[0].LastUser; got != "say hi" {
		t.Errorf("LastUser = %q", got)
	}
	if all := m.All(); all[2].Kind != "title" {
		t.Errorf("side request kind = %q, want title", all[2].Kind)
	}
	if !strings.Contains(strings.Join(m.Turns()[1].Tools, ","), "bash") {
		t.Errorf("tools = %v", m.Turns()[1].Tools)
	}
}
