package mockmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Anthropic is a mock Anthropic Messages API server for Claude Code
// (ANTHROPIC_BASE_URL = URL). Model turns are POST /v1/messages requests
// that offer tools; Claude Code's side requests (quota probes, titles,
// token counts) are answered and logged with Turn 0.
type Anthropic struct {
	*Log
	// URL is the server's base URL, e.g. http://127.0.0.1:PORT.
	URL  string
	srv  *httptest.Server
	opts Options
	ids  idGen
}

// NewAnthropic starts a mock Anthropic server on a random local port. Close
// it when done (t.Cleanup(m.Close)).
func NewAnthropic(opts Options) *Anthropic {
	m := &Anthropic{Log: newLog(), opts: opts}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	return m
}

// Close stops the server, cancelling streams still running.
func (m *Anthropic) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

// anthropicRequest is the part of a Messages request the mock reads.
type anthropicRequest struct {
	Model     string            `json:"model"`
	Stream    bool              `json:"stream"`
	MaxTokens int               `json:"max_tokens"`
	Messages  []json.RawMessage `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
	System    json.RawMessage   `json:"system"`
	// OutputConfig carries a JSON schema for structured side requests
	// (Claude Code's session title).
	OutputConfig struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// lastUserText flattens the content of the last user message: text blocks,
// and the text inside tool results.
func (a anthropicRequest) lastUserText() string {
	for i := len(a.Messages) - 1; i >= 0; i-- {
		var m anthropicMessage
		if json.Unmarshal(a.Messages[i], &m) != nil || m.Role != "user" {
			continue
		}
		return flattenAnthropic(m.Content)
	}
	return ""
}

// flattenAnthropic turns a content value (a string or a list of blocks)
// into text.
func flattenAnthropic(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "text":
			parts = append(parts, b.Text)
		case b.Type == "tool_result" && len(b.Content) > 0:
			parts = append(parts, flattenAnthropic(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

func (m *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := baseRequest(r, body)
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		req.Kind = "count_tokens"
		m.add(req, false)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 1})
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		m.messages(w, r, req, body)
	default:
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusOK, map[string]any{})
	}
}

// messages answers POST /v1/messages, streaming or not.
func (m *Anthropic) messages(w http.ResponseWriter, r *http.Request, req Request, body []byte) {
	var ar anthropicRequest
	if err := json.Unmarshal(body, &ar); err != nil {
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusBadRequest, map[string]any{"type": "error",
			"error": map[string]any{"type": "invalid_request_error", "message": "mock: bad JSON: " + err.Error()}})
		return
	}
	req.Model = ar.Model
	req.LastUser = ar.lastUserText()
	req.Tools = toolNames(ar.Tools)
	var reply Reply
	switch kind := anthropicSideKind(ar, req.LastUser); kind {
	case "":
		req = m.add(req, true)
		reply = m.opts.script()(req)
	default:
		req.Kind = kind
		m.add(req, false)
		reply = Reply{Text: sideAnswer(kind)}
		if f := ar.OutputConfig.Format; len(f.Schema) > 0 {
			b, _ := json.Marshal(fillSchema(f.Schema))
			reply.Text = string(b)
		}
	}
	model := m.opts.Model
	if model == "" {
		model = ar.Model
	}
	if !ar.Stream {
		writeJSON(w, http.StatusOK, m.message(model, reply))
		m.replied(req.Seq)
		return
	}
	if m.stream(r.Context(), w, model, reply) {
		m.replied(req.Seq)
	}
}

// anthropicSideKind classifies a Messages request: "" for a model turn (it
// offers tools), else the kind of side request. Claude Code 2.1.328 sends
// its session-title request with "tools": [] and an output_config JSON
// schema asking for {"title": …}.
func anthropicSideKind(ar anthropicRequest, lastUser string) string {
	if len(ar.Tools) > 0 {
		return ""
	}
	switch {
	case ar.MaxTokens == 1 || strings.TrimSpace(lastUser) == "quota":
		return "quota"
	case strings.Contains(string(ar.OutputConfig.Format.Schema), `"title"`),
		strings.Contains(strings.ToLower(string(ar.System)), "title"):
		return "title"
	default:
		return "side"
	}
}

// sideAnswer is the text answering a side request.
func sideAnswer(kind string) string {
	switch kind {
	case "title":
		return `{"title": "Mock session"}`
	case "quota":
		return "ok"
	default:
		return "OK."
	}
}

// message builds a non-streamed Messages response.
func (m *Anthropic) message(model string, reply Reply) map[string]any {
	content := []any{}
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	stop := "end_turn"
	if tu := reply.ToolUse; tu != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": m.toolID(tu), "name": tu.Name, "input": toolInput(tu)})
		stop = "tool_use"
	}
	return map[string]any{
		"id": m.ids.next("msg_mock"), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10},
	}
}

func (m *Anthropic) toolID(tu *ToolUse) string {
	if tu.ID != "" {
		return tu.ID
	}
	return m.ids.next("toolu_mock")
}

func toolInput(tu *ToolUse) map[string]any {
	if tu.Input == nil {
		return map[string]any{}
	}
	return tu.Input
}

// stream answers with the Messages server-sent events.
func (m *Anthropic) stream(ctx context.Context, w http.ResponseWriter, model string, reply Reply) bool {
	s := startSSE(w)
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": m.ids.next("msg_mock"), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}}) != nil {
		return false
	}
	if !wait(ctx, reply.Delay, reply.Gate) {
		return false
	}
	index := 0
	if reply.Text != "" {
		if s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}}) != nil {
			return false
		}
		for _, c := range chunks(reply.Text, reply.Chunk) {
			if !pause(ctx, reply.ChunkDelay) {
				return false
			}
			if s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": c}}) != nil {
				return false
			}
		}
		if s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}) != nil {
			return false
		}
		index++
	}
	stop := "end_turn"
	if tu := reply.ToolUse; tu != nil {
		stop = "tool_use"
		in, _ := json.Marshal(toolInput(tu))
		if s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": m.toolID(tu), "name": tu.Name, "input": map[string]any{}}}) != nil {
			return false
		}
		if s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}}) != nil {
			return false
		}
		if s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}) != nil {
			return false
		}
	}
	if s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}}) != nil {
		return false
	}
	return s.event("message_stop", map[string]any{"type": "message_stop"}) == nil
}
