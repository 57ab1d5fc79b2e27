package mockmodel

import (
	"encoding/json"
	"strings"
)

// fillSchema returns a value that roughly matches a JSON schema: the side
// requests of the CLIs (titles, summaries, complexity scores) ask for JSON
// of a given shape and fail or retry when it does not parse.
func fillSchema(raw json.RawMessage) any {
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil {
		return map[string]any{}
	}
	return fillValue("", s, 0)
}

func fillValue(name string, s map[string]any, depth int) any {
	if depth > 8 {
		return nil
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			if ps, ok := v.(map[string]any); ok {
				out[k] = fillValue(k, ps, depth+1)
			}
		}
		return out
	case "array":
		if items, ok := s["items"].(map[string]any); ok {
			return []any{fillValue(name, items, depth+1)}
		}
		return []any{}
	case "integer", "number":
		lo, hasLo := s["minimum"].(float64)
		hi, hasHi := s["maximum"].(float64)
		switch {
		case hasLo && hasHi:
			return float64(int((lo + hi) / 2))
		case hasLo:
			return lo
		case hasHi && hi < 50:
			return hi
		}
		return 50
	case "boolean":
		return false
	case "string":
		switch strings.ToLower(name) {
		case "title":
			return "Mock session"
		case "summary":
			return "A mock session."
		}
		return "mock"
	}
	return nil
}
