package mockmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// Responses is a mock OpenAI Responses API server for Codex (a custom
// model provider whose base_url is URL + "/v1", wire_api "responses").
// Model turns are POST /v1/responses requests; the thread-title request
// (its text.format asks for a JSON schema) is answered with {"title": …}
// and logged with Turn 0.
type Responses struct {
	*Log
	// URL is the server's base URL, e.g. http://127.0.0.1:PORT.
	URL  string
	srv  *httptest.Server
	opts Options
	ids  idGen
}

// NewResponses starts a mock Responses server on a random local port.
// Close it when done.
func NewResponses(opts Options) *Responses {
	m := &Responses{Log: newLog(), opts: opts}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	return m
}

// Close stops the server, cancelling streams still running.
func (m *Responses) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

// responsesRequest is the part of a Responses request the mock reads.
type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []json.RawMessage `json:"tools"`
	Text   struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
}

// lastUserText flattens the last user message, or the last tool output
// when tool outputs follow it.
func (q responsesRequest) lastUserText() string {
	for i := len(q.Input) - 1; i >= 0; i-- {
		var it responsesItem
		if json.Unmarshal(q.Input[i], &it) != nil {
			continue
		}
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			return flattenResponses(it.Output)
		case it.Role == "user":
			return flattenResponses(it.Content)
		}
	}
	return ""
}

func flattenResponses(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	var obj struct {
		Content string `json:"content"`
		Output  string `json:"output"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Content + obj.Output
	}
	return ""
}

func (m *Responses) serve(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := baseRequest(r, body)
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		req.Kind = "other"
		m.add(req, false)
		if strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	var q responsesRequest
	if err := json.Unmarshal(body, &q); err != nil {
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "mock: bad JSON: " + err.Error()}})
		return
	}
	req.Model = q.Model
	req.LastUser = q.lastUserText()
	req.Tools = toolNames(q.Tools)
	var reply Reply
	if f := q.Text.Format; f.Type == "json_schema" && len(f.Schema) > 0 {
		req.Kind = "utility"
		if strings.Contains(string(f.Schema), `"title"`) {
			req.Kind = "title"
		}
		m.add(req, false)
		b, _ := json.Marshal(fillSchema(f.Schema))
		reply = Reply{Text: string(b)}
	} else {
		req = m.add(req, true)
		reply = m.opts.script()(req)
	}
	model := m.opts.Model
	if model == "" {
		model = q.Model
	}
	if m.stream(r.Context(), w, model, reply) {
		m.replied(req.Seq)
	}
}

// stream answers with the Responses server-sent events.
func (m *Responses) stream(ctx context.Context, w http.ResponseWriter, model string, reply Reply) bool {
	s := startSSE(w)
	respID := m.ids.next("resp_mock")
	created := time.Now().Unix()
	resp := func(status string, output []any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 10, "total_tokens": 20,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	}
	ev := func(typ string, fields map[string]any) bool {
		fields["type"] = typ
		return s.event(typ, fields) == nil
	}
	if !ev("response.created", map[string]any{"response": resp("in_progress", []any{})}) {
		return false
	}
	if !wait(ctx, reply.Delay, reply.Gate) {
		return false
	}
	var output []any
	index := 0
	if reply.Text != "" {
		itemID := m.ids.next("msg_mock")
		item := map[string]any{"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
		if !ev("response.output_item.added", map[string]any{"output_index": index, "item": item}) {
			return false
		}
		if !ev("response.content_part.added", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}) {
			return false
		}
		for _, c := range chunks(reply.Text, reply.Chunk) {
			if !pause(ctx, reply.ChunkDelay) {
				return false
			}
			if !ev("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "delta": c}) {
				return false
			}
		}
		part := map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}
		if !ev("response.output_text.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "text": reply.Text}) ||
			!ev("response.content_part.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "part": part}) {
			return false
		}
		done := map[string]any{"id": itemID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		if !ev("response.output_item.done", map[string]any{"output_index": index, "item": done}) {
			return false
		}
		output = append(output, done)
		index++
	}
	if tu := reply.ToolUse; tu != nil {
		args, _ := json.Marshal(toolInput(tu))
		callID := tu.ID
		if callID == "" {
			callID = m.ids.next("call_mock")
		}
		itemID := m.ids.next("fc_mock")
		ns, name := splitNamespace(tu.Name)
		item := map[string]any{"id": itemID, "type": "function_call", "status": "in_progress", "call_id": callID, "name": name, "arguments": ""}
		if ns != "" {
			item["namespace"] = ns
		}
		if !ev("response.output_item.added", map[string]any{"output_index": index, "item": item}) ||
			!ev("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": index, "delta": string(args)}) ||
			!ev("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": index, "arguments": string(args)}) {
			return false
		}
		done := map[string]any{"id": itemID, "type": "function_call", "status": "completed", "call_id": callID, "name": name, "arguments": string(args)}
		if ns != "" {
			done["namespace"] = ns
		}
		if !ev("response.output_item.done", map[string]any{"output_index": index, "item": done}) {
			return false
		}
		output = append(output, done)
	}
	if output == nil {
		output = []any{}
	}
	return ev("response.completed", map[string]any{"response": resp("completed", output)})
}
