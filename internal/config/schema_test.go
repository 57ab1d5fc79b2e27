package config

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestSchemaMatchesStruct checks docs/config.schema.json against the
// struct the files are decoded into: every key the decoder accepts is in
// the schema and every key of the schema is accepted. Map keys are written
// `*`, lists of tables `[]`.
func TestSchemaMatchesStruct(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("docs/config.schema.json: %v", err)
	}
	if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", schema["$schema"])
	}
	defs, _ := schema["$defs"].(map[string]any)

	fromSchema := map[string]bool{}
	walkSchema(t, defs, schema, "", fromSchema)
	// hooks lists every event and alias by name; the struct has a map.
	var events, keys []string
	for k := range fromSchema {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, "hooks."); ok {
			ev, _, _ := strings.Cut(rest, "[")
			ev, _, _ = strings.Cut(ev, ".")
			events = append(events, ev)
			delete(fromSchema, k)
			fromSchema["hooks.*"+strings.TrimPrefix(rest, ev)] = true
		}
	}
	want := eventNames()
	sort.Strings(want)
	events = unique(events)
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("schema's hook events: %v\nwant %v", events, want)
	}

	fromStruct := map[string]bool{}
	walkType(reflect.TypeOf(fileConfig{}), "", fromStruct)
	// patterns values are decoded by decodePatterns: one filePattern table
	// or a list of them.
	walkType(reflect.TypeOf(filePattern{}), "patterns.*", fromStruct)
	walkType(reflect.TypeOf(filePattern{}), "patterns.*[]", fromStruct)

	for k := range fromStruct {
		if !fromSchema[k] {
			t.Errorf("key %s is accepted but not in the schema", k)
		}
	}
	for k := range fromSchema {
		if !fromStruct[k] {
			t.Errorf("key %s is in the schema but not accepted", k)
		}
	}
	if len(fromStruct) < 30 {
		t.Errorf("only %d keys found: the walk is broken", len(fromStruct))
	}
}

func unique(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func resolve(t *testing.T, defs map[string]any, s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		d, ok2 := defs[name].(map[string]any)
		if !ok || !ok2 {
			t.Fatalf("bad $ref %q", ref)
		}
		s = d
	}
}

func walkSchema(t *testing.T, defs, s map[string]any, path string, out map[string]bool) {
	s = resolve(t, defs, s)
	props, _ := s["properties"].(map[string]any)
	addl, _ := s["additionalProperties"].(map[string]any)
	items, _ := s["items"].(map[string]any)
	if one, ok := s["oneOf"].([]any); ok {
		// One value in several shapes ([patterns.NAME] or a list of
		// them): every shape's keys.
		for _, alt := range one {
			if m, ok := alt.(map[string]any); ok {
				walkSchema(t, defs, m, path, out)
			}
		}
		return
	}
	switch {
	case props != nil:
		for k, v := range props {
			p := join(path, k)
			out[p] = true
			walkSchema(t, defs, v.(map[string]any), p, out)
		}
	case addl != nil:
		p := path + ".*"
		out[p] = true
		walkSchema(t, defs, addl, p, out)
	case items != nil:
		if it := resolve(t, defs, items); it["properties"] != nil {
			walkSchema(t, defs, it, path+"[]", out)
		}
	}
}

func walkType(typ reflect.Type, path string, out map[string]bool) {
	typ = deref(typ)
	switch typ.Kind() {
	case reflect.Struct:
		for i := 0; i < typ.NumField(); i++ {
			p := join(path, tagName(typ.Field(i)))
			out[p] = true
			walkType(typ.Field(i).Type, p, out)
		}
	case reflect.Map:
		p := path + ".*"
		out[p] = true
		walkType(typ.Elem(), p, out)
	case reflect.Slice:
		if deref(typ.Elem()).Kind() == reflect.Struct {
			walkType(typ.Elem(), path+"[]", out)
		}
	}
}
