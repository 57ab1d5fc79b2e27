package mockmodel

import (
	"encoding/json"
	"slices"
	"strings"
)

// ToolSearch is Claude Code's tool that loads deferred tools: with MCP
// tools deferred (its default), a request offers ToolSearch instead of
// them, and the model must search before it can call one.
const ToolSearch = "ToolSearch"

// HasTool reports whether the request offers a tool named name.
func (r Request) HasTool(name string) bool { return slices.Contains(r.Tools, name) }

// FindTool returns the first offered tool whose name ends with suffix
// ("__send" finds mcp__relay__send, whatever prefix the CLI gives an MCP
// server's tools), or "".
func (r Request) FindTool(suffix string) string {
	for _, t := range r.Tools {
		if t == suffix || strings.HasSuffix(t, suffix) {
			return t
		}
	}
	return ""
}

// CallTool is the reply that calls the tool named name (or ending with
// it, see FindTool) with input, after text. When the request does not offer
// it but offers ToolSearch (Claude Code's deferred MCP tools), the reply
// searches for it first: the next turn then offers it, and the script
// calls CallTool again. ok is false when neither is offered.
func CallTool(r Request, text, name string, input map[string]any) (reply Reply, ok bool) {
	if t := r.FindTool(name); t != "" {
		return Reply{Text: text, ToolUse: &ToolUse{Name: t, Input: input}}, true
	}
	if r.HasTool(ToolSearch) {
		return Reply{Text: text, ToolUse: &ToolUse{Name: ToolSearch, Input: map[string]any{"query": "select:" + name}}}, true
	}
	return Reply{}, false
}

// NamespaceSep joins a Responses namespace and a tool of it in Request.Tools
// and ToolUse.Name: Codex 0.169 offers an MCP server's tools as a namespace
// ({"type": "namespace", "name": "mcp__relay", "tools": [{"name": "send"}]})
// and they are called with both ("namespace": "mcp__relay", "name": "send").
const NamespaceSep = "/"

// splitNamespace splits a tool name into its Responses namespace (or "")
// and its name.
func splitNamespace(tool string) (ns, name string) {
	if i := strings.LastIndex(tool, NamespaceSep); i >= 0 {
		return tool[:i], tool[i+1:]
	}
	return "", tool
}

// toolNames reads the names of the tools a request offers, in the three
// wire formats: Anthropic ({"name"}), Responses ({"name"}, or a
// namespace's {"tools": […]}, as NAMESPACE/NAME) and Gemini
// ({"functionDeclarations": […]}).
func toolNames(tools []json.RawMessage) []string {
	var names []string
	for _, raw := range tools {
		var t struct {
			Name  string            `json:"name"`
			Tools []json.RawMessage `json:"tools"`
			Decls []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		if len(t.Tools) > 0 {
			for _, n := range toolNames(t.Tools) {
				names = append(names, t.Name+NamespaceSep+n)
			}
		} else if t.Name != "" {
			names = append(names, t.Name)
		}
		for _, d := range t.Decls {
			names = append(names, d.Name)
		}
	}
	return names
}
