package mockmodel

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
)

// Gemini is a mock Gemini API server for Gemini CLI
// (GOOGLE_GEMINI_BASE_URL = URL). Model turns are requests to
// /v1beta/models/MODEL:streamGenerateContent that carry tools; utility calls
// (:generateContent asking for JSON by generationConfig.responseJsonSchema,
// :countTokens) are answered with roughly matching JSON and logged with
// Turn 0.
type Gemini struct {
	*Log
	// URL is the server's base URL, e.g. http://127.0.0.1:PORT.
	URL  string
	srv  *httptest.Server
	opts Options
}

// NewGemini starts a mock Gemini server on a random local port. Close it
// when done.
func NewGemini(opts Options) *Gemini {
	m := &Gemini{Log: newLog(), opts: opts}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	return m
}

// Close stops the server, cancelling streams still running.
func (m *Gemini) Close() {
	m.srv.CloseClientConnections()
	m.srv.Close()
}

type geminiRequest struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools            []json.RawMessage `json:"tools"`
	GenerationConfig struct {
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

// lastUserText flattens the parts of the last user content: texts, and
// function responses as JSON.
func (g geminiRequest) lastUserText() string {
	for i := len(g.Contents) - 1; i >= 0; i-- {
		c := g.Contents[i]
		if c.Role != "user" && c.Role != "" {
			continue
		}
		var out []string
		for _, p := range c.Parts {
			var part struct {
				Text             *string         `json:"text"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			}
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			switch {
			case part.Text != nil:
				out = append(out, *part.Text)
			case len(part.FunctionResponse) > 0:
				out = append(out, string(part.FunctionResponse))
			}
		}
		return strings.Join(out, "\n")
	}
	return ""
}

func (m *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := baseRequest(r, body)
	path := r.URL.Path
	model, method, _ := strings.Cut(path[strings.LastIndex(path, "/")+1:], ":")
	req.Model = model
	if r.Method != http.MethodPost || method == "" {
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	var g geminiRequest
	if err := json.Unmarshal(body, &g); err != nil {
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "mock: bad JSON: " + err.Error(), "status": "INVALID_ARGUMENT"}})
		return
	}
	req.LastUser = g.lastUserText()
	req.Tools = toolNames(g.Tools)
	switch method {
	case "countTokens":
		req.Kind = "count_tokens"
		m.add(req, false)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 10})
		return
	case "streamGenerateContent", "generateContent":
	default:
		req.Kind = "other"
		m.add(req, false)
		writeJSON(w, http.StatusOK, map[string]any{})
		return
	}
	var reply Reply
	if method == "streamGenerateContent" && len(g.Tools) > 0 {
		req = m.add(req, true)
		reply = m.opts.script()(req)
	} else {
		req.Kind = "utility"
		m.add(req, false)
		reply = Reply{Text: "OK."}
		schema := g.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = g.GenerationConfig.ResponseSchema
		}
		if len(schema) > 0 {
			b, _ := json.Marshal(fillSchema(schema))
			reply.Text = string(b)
		}
	}
	if method == "generateContent" {
		writeJSON(w, http.StatusOK, geminiChunk(m.parts(reply.Text, reply.ToolUse), true))
		m.replied(req.Seq)
		return
	}
	if m.stream(r.Context(), w, reply) {
		m.replied(req.Seq)
	}
}

// parts builds the content parts of a reply piece.
func (m *Gemini) parts(text string, tu *ToolUse) []any {
	var parts []any
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	if tu != nil {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tu.Name, "args": toolInput(tu)}})
	}
	return parts
}

// geminiChunk is one GenerateContentResponse; last adds the finish reason
// and usage.
func geminiChunk(parts []any, last bool) map[string]any {
	if parts == nil {
		parts = []any{}
	}
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	out := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-flash"}
	if last {
		cand["finishReason"] = "STOP"
		out["usageMetadata"] = map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}
	}
	return out
}

// stream answers with data-only server-sent events, the last one carrying
// finishReason STOP.
func (m *Gemini) stream(ctx context.Context, w http.ResponseWriter, reply Reply) bool {
	s := startSSE(w)
	if !wait(ctx, reply.Delay, reply.Gate) {
		return false
	}
	pieces := chunks(reply.Text, reply.Chunk)
	for i, c := range pieces {
		if i > 0 && !pause(ctx, reply.ChunkDelay) {
			return false
		}
		last := i == len(pieces)-1 && reply.ToolUse == nil
		if s.event("", geminiChunk(m.parts(c, nil), last)) != nil {
			return false
		}
	}
	if reply.ToolUse != nil || len(pieces) == 0 {
		return s.event("", geminiChunk(m.parts("", reply.ToolUse), true)) == nil
	}
	return true
}
