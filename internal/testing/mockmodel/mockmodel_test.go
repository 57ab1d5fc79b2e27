package mockmodel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// event is one server-sent event.
type event struct {
	Name string
	Data map[string]any
}

// post sends body to url and returns the parsed events of the stream (or
// the JSON document as one event named "json").
func post(t *testing.T, url, body string) []event {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", url, resp.Status, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var doc map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return []event{{Name: "json", Data: doc}}
	}
	var out []event
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case line == "data: [DONE]":
			out = append(out, event{Name: "[DONE]"})
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			out = append(out, event{Name: name, Data: d})
			name = ""
		}
	}
	return out
}

func names(evs []event) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return strings.Join(n, " ")
}

func TestAnthropicStreamsScriptedTextAndToolUse(t *testing.T) {
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "héllo wörld, a reply cut in small pieces", Chunk: 5,
			ToolUse: &mockmodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "true"}}},
	)})
	defer m.Close()
	turn := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[
		{"role":"user","content":"earlier"},{"role":"assistant","content":"ok"},
		{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"please run it"}]}]}`
	evs := post(t, m.URL+"/v1/messages?beta=true", turn)
	want := "message_start content_block_start"
	if got := names(evs); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "content_block_stop message_delta message_stop") {
		t.Fatalf("events = %s", got)
	}
	var text, toolJSON string
	for _, e := range evs {
		if d, ok := e.Data["delta"].(map[string]any); ok {
			if s, ok := d["text"].(string); ok {
				text += s
			}
			if s, ok := d["partial_json"].(string); ok {
				toolJSON += s
			}
		}
	}
	if text != "héllo wörld, a reply cut in small pieces" {
		t.Errorf("streamed text = %q", text)
	}
	if toolJSON != `{"command":"true"}` {
		t.Errorf("tool input = %q", toolJSON)
	}
	if sr := evs[len(evs)-2].Data["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Errorf("stop_reason = %v, want tool_use", sr)
	}
	turns := m.Turns()
	if len(turns) != 1 || turns[0].LastUser != "<system-reminder>x</system-reminder>\nplease run it" {
		t.Fatalf("turns = %+v", turns)
	}
	// After the queue is used up, turns get "OK.".
	evs = post(t, m.URL+"/v1/messages", strings.Replace(turn, `"stream":true`, `"stream":false`, 1))
	if c := evs[0].Data["content"].([]any)[0].(map[string]any)["text"]; c != "OK." {
		t.Errorf("non-streamed reply = %v", c)
	}
}

func TestAnthropicSideRequestsAreNotTurns(t *testing.T) {
	m := mockmodel.NewAnthropic(mockmodel.Options{})
	defer m.Close()
	title := `{"model":"m","stream":true,"tools":[],"messages":[{"role":"user","content":"<session>\nhi\n</session>"}],
		"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}}}}}}`
	evs := post(t, m.URL+"/v1/messages?beta=true", title)
	var text string
	for _, e := range evs {
		if d, ok := e.Data["delta"].(map[string]any); ok {
			s, _ := d["text"].(string)
			text += s
		}
	}
	if text != `{"title":"Mock session"}` {
		t.Errorf("title answer = %q", text)
	}
	post(t, m.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	req, _ := http.NewRequest(http.MethodHead, m.URL+"/api/hello", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if n := len(m.Turns()); n != 0 {
		t.Errorf("side requests counted as %d turns", n)
	}
	var kinds []string
	for _, r := range m.All() {
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, " "); got != "title count_tokens other" {
		t.Errorf("kinds = %s", got)
	}
}

func TestWaitForRequestAndGate(t *testing.T) {
	gate := make(chan struct{})
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(mockmodel.Reply{Text: "held", Gate: gate})})
	defer m.Close()
	done := make(chan []event)
	go func() {
		done <- post(t, m.URL+"/v1/messages", `{"stream":true,"tools":[{}],"messages":[{"role":"user","content":"msg-42 body"}]}`)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := m.WaitForRequest(ctx, "msg-42")
	if err != nil {
		t.Fatal(err)
	}
	if r.Turn != 1 || r.Seq != 1 {
		t.Errorf("request = turn %d seq %d", r.Turn, r.Seq)
	}
	select {
	case <-done:
		t.Fatal("the reply finished while its gate was closed")
	case <-time.After(100 * time.Millisecond):
	}
	if !m.Turns()[0].Replied.IsZero() {
		t.Error("turn marked replied while its gate was closed")
	}
	close(gate)
	if got := names(<-done); !strings.Contains(got, "message_stop") {
		t.Errorf("events after the gate opened = %s", got)
	}
	if _, err := m.WaitReplied(ctx, 1); err != nil {
		t.Error(err)
	}
	if n := m.Count("msg-42"); n != 1 {
		t.Errorf("Count = %d", n)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := m.WaitForRequest(short, "never sent"); err == nil || !strings.Contains(err.Error(), "msg-42 body") {
		t.Errorf("timeout error should list the turns seen, got %v", err)
	}
}

func TestResponsesStreamAndTitle(t *testing.T) {
	m := mockmodel.NewResponses(mockmodel.Options{Script: mockmodel.Fixed("Hi there, Codex.")})
	defer m.Close()
	evs := post(t, m.URL+"/v1/responses", `{"model":"mock-model","stream":true,"tools":[{}],"input":[
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"say hi"}]}]}`)
	if got := names(evs); !strings.HasPrefix(got, "response.created response.output_item.added") || !strings.HasSuffix(got, "response.output_item.done response.completed") {
		t.Fatalf("events = %s", got)
	}
	var text string
	for _, e := range evs {
		if e.Name == "response.output_text.delta" {
			text += e.Data["delta"].(string)
		}
	}
	if text != "Hi there, Codex." {
		t.Errorf("text = %q", text)
	}
	if id := evs[len(evs)-1].Data["response"].(map[string]any)["id"]; id == "" || id == nil {
		t.Error("response.completed without a response id")
	}
	evs = post(t, m.URL+"/v1/responses", `{"model":"mock-model","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"name it"}]}],
		"text":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}}}}}}`)
	for _, e := range evs {
		if e.Name == "response.output_text.done" && e.Data["text"] != `{"title":"Mock session"}` {
			t.Errorf("title answer = %v", e.Data["text"])
		}
	}
	if n, all := len(m.Turns()), len(m.All()); n != 1 || all != 2 {
		t.Errorf("turns = %d of %d requests, want 1 of 2", n, all)
	}
	if got := m.Turns()[0].LastUser; got != "say hi" {
		t.Errorf("LastUser = %q", got)
	}
}

func TestGeminiStreamAndUtilityCalls(t *testing.T) {
	m := mockmodel.NewGemini(mockmodel.Options{Script: mockmodel.Queue(mockmodel.Reply{Text: "A Gemini reply in pieces.", Chunk: 8})})
	defer m.Close()
	evs := post(t, m.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"tools":[{}],"contents":[
		{"role":"user","parts":[{"text":"<session_context>ctx</session_context>"},{"text":"hello gemini"}]}]}`)
	var text string
	for i, e := range evs {
		c := e.Data["candidates"].([]any)[0].(map[string]any)
		for _, p := range c["content"].(map[string]any)["parts"].([]any) {
			text += p.(map[string]any)["text"].(string)
		}
		if fr, _ := c["finishReason"].(string); (fr == "STOP") != (i == len(evs)-1) {
			t.Errorf("event %d finishReason %q", i, fr)
		}
	}
	if text != "A Gemini reply in pieces." {
		t.Errorf("text = %q", text)
	}
	evs = post(t, m.URL+"/v1beta/models/gemini-2.5-flash-lite:generateContent", `{"contents":[{"role":"user","parts":[{"text":"rate it"}]}],
		"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"complexity_score":{"type":"integer","minimum":1,"maximum":100},"reasoning":{"type":"string"}}}}}`)
	part := evs[0].Data["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"].(string)
	var got map[string]any
	if err := json.Unmarshal([]byte(part), &got); err != nil || got["complexity_score"] != float64(50) {
		t.Errorf("utility answer = %s (%v)", part, err)
	}
	if turns := m.Turns(); len(turns) != 1 || !strings.HasSuffix(turns[0].LastUser, "hello gemini") {
		t.Errorf("turns = %+v", turns)
	}
}
