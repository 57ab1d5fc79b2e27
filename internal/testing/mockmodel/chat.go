package mockmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// Chat is a mock OpenAI chat-completions server, for the CLIs that speak
// it to an OpenAI-compatible provider whose base URL is URL + "/v1"
// (OpenCode, pi, Qwen Code). Model turns are POST …/chat/completions
// requests that offer tools; a request that offers none is a side request
// (OpenCode's session title, Kind "title" when it asks for a title, else
// "utility"), answered with Reply{Text: "Mock session"} (or a filled JSON
// schema when it asks for one) and logged with Turn 0. GET …/models lists
// the requested model. Streaming requests get server-sent chunks ending
// in `data: [DONE]`; others one JSON completion.
type Chat struct {
	*Log
	// URL is the server's base URL, e.g. http://127.0.0.1:PORT.
	URL  string
	srv  *httptest.Server
	opts Options
	ids  idGen
}

// ChatModel is the model the CLIs speaking chat completions are configured
// with, and the one GET /v1/models lists when Options.Model is empty.
const ChatModel = "mock-model"

// NewChat starts a mock chat-completions server on a random local port.
// Close it when done.
func NewChat(opts Options) *Chat {
	m := &Chat{Log: newLog(), opts: opts}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	return m
}

// Close stops the server, cancelling streams still running.
func (m *Chat) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

// chatRequest is the part of a chat-completions request the mock reads.
type chatRequest struct {
	Model          string            `json:"model"`
	Stream         bool              `json:"stream"`
	Messages       []chatMessage     `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// lastUserText flattens the last user message, with the tool results that
// follow it.
func (q chatRequest) lastUserText() string {
	var tools []string
	for i := len(q.Messages) - 1; i >= 0; i-- {
		msg := q.Messages[i]
		switch msg.Role {
		case "tool":
			tools = append([]string{flattenResponses(msg.Content)}, tools...)
		case "user":
			if len(tools) > 0 {
				return strings.Join(tools, "\n")
			}
			return flattenResponses(msg.Content)
		case "assistant":
			if len(tools) > 0 {
				return strings.Join(tools, "\n")
			}
		}
	}
	return strings.Join(tools, "\n")
}

// chatToolNames reads {"type": "function", "function": {"name"}} tools.
func chatToolNames(tools []json.RawMessage) []string {
	var names []string
	for _, raw := range tools {
		var t struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Function.Name != "" {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

func (m *Chat) serve(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := baseRequest(r, body)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		req.Kind = "other"
		m.add(req, false)
		if strings.HasSuffix(r.URL.Path, "/models") {
			name := m.opts.Model
			if name == "" {
				name = ChatModel
			}
			writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
				map[string]any{"id": name, "object": "model", "owned_by": "mock"}}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	var q chatRequest
	if err := json.Unmarshal(body, &q); err != nil {
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "mock: bad JSON: " + err.Error()}})
		return
	}
	req.Model = q.Model
	req.LastUser = q.lastUserText()
	req.Tools = chatToolNames(q.Tools)
	var reply Reply
	switch {
	case len(q.Tools) > 0:
		req = m.add(req, true)
		reply = m.opts.script()(req)
	case len(q.ResponseFormat.JSONSchema.Schema) > 0:
		req.Kind = "utility"
		m.add(req, false)
		b, _ := json.Marshal(fillSchema(q.ResponseFormat.JSONSchema.Schema))
		reply = Reply{Text: string(b)}
	default:
		req.Kind = "utility"
		if strings.Contains(strings.ToLower(string(body)), "title") {
			req.Kind = "title"
		}
		m.add(req, false)
		reply = Reply{Text: "Mock session"}
	}
	model := m.opts.Model
	if model == "" {
		model = q.Model
	}
	ok := false
	if q.Stream {
		ok = m.stream(r.Context(), w, model, reply, q.StreamOptions.IncludeUsage)
	} else {
		ok = m.whole(r.Context(), w, model, reply)
	}
	if ok {
		m.replied(req.Seq)
	}
}

// usage is the token count every answer reports.
func chatUsage() map[string]any {
	return map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
}

// toolCall is the tool call of a reply in the chat-completions shape.
func (m *Chat) toolCall(tu *ToolUse) map[string]any {
	args, _ := json.Marshal(toolInput(tu))
	id := tu.ID
	if id == "" {
		id = m.ids.next("call_mock")
	}
	return map[string]any{"index": 0, "id": id, "type": "function",
		"function": map[string]any{"name": tu.Name, "arguments": string(args)}}
}

// whole answers a request without "stream" with one completion.
func (m *Chat) whole(ctx context.Context, w http.ResponseWriter, model string, reply Reply) bool {
	if !wait(ctx, reply.Delay, reply.Gate) {
		return false
	}
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	finish := "stop"
	if reply.ToolUse != nil {
		msg["tool_calls"] = []any{m.toolCall(reply.ToolUse)}
		finish = "tool_calls"
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": m.ids.next("chatcmpl-mock"), "object": "chat.completion",
		"created": time.Now().Unix(), "model": model, "usage": chatUsage(),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}})
	return true
}

// stream answers with chat.completion.chunk events and `data: [DONE]`.
func (m *Chat) stream(ctx context.Context, w http.ResponseWriter, model string, reply Reply, usage bool) bool {
	s := startSSE(w)
	id := m.ids.next("chatcmpl-mock")
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) bool {
		return s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) == nil
	}
	if !chunk(map[string]any{"role": "assistant", "content": ""}, nil) {
		return false
	}
	if !wait(ctx, reply.Delay, reply.Gate) {
		return false
	}
	for _, c := range chunks(reply.Text, reply.Chunk) {
		if !pause(ctx, reply.ChunkDelay) || !chunk(map[string]any{"content": c}, nil) {
			return false
		}
	}
	finish := "stop"
	if reply.ToolUse != nil {
		if !chunk(map[string]any{"tool_calls": []any{m.toolCall(reply.ToolUse)}}, nil) {
			return false
		}
		finish = "tool_calls"
	}
	if !chunk(map[string]any{}, finish) {
		return false
	}
	if usage {
		if s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{}, "usage": chatUsage()}) != nil {
			return false
		}
	}
	if _, err := s.w.Write([]byte("data: [DONE]\n\n")); err != nil {
		return false
	}
	s.flush()
	return true
}
