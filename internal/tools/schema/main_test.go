package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents/registry"
)

const schemaPath = "../../../docs/config.schema.json"

// TestSchemaIsGenerated fails when docs/config.schema.json differs from
// what the registry gives: a CLI added to (or removed from) the registry
// without `go generate ./internal/tools/schema`.
func TestSchemaIsGenerated(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(old, registry.Names())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, want) {
		t.Errorf("docs/config.schema.json is not what the registry gives: run go generate ./internal/tools/schema")
	}
}

// TestSchemaNamesEveryProfile reads the generated schema as an editor
// would: every profile of the registry is in the profile key's description
// and examples.
func TestSchemaNamesEveryProfile(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate(old, registry.Names())
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Description string   `json:"description"`
			Examples    []string `json:"examples"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	prof := schema.Properties["profile"]
	for _, p := range registry.All() {
		if !strings.Contains(prof.Description, p.Name) || !slices.Contains(prof.Examples, p.Name) {
			t.Errorf("profile %q missing from the schema's profile key: %+v", p.Name, prof)
		}
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	in := "{\n  \"properties\": {\n    \"profile\": {\n      \"description\": \"old\"\n    },\n    \"x\": {\"profile\": {}}\n  }\n}\n"
	got, err := generate([]byte(in), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"properties\": {\n    \"profile\": {\n" +
		"      \"description\": \"Force an agent profile (a, b) instead of choosing it from the command (RELAY_PROFILE, --profile).\",\n" +
		"      \"$ref\": \"#/$defs/name\",\n      \"examples\": [\"a\", \"b\"]\n    },\n    \"x\": {\"profile\": {}}\n  }\n}\n"
	if string(got) != want {
		t.Errorf("generate:\n%s\nwant\n%s", got, want)
	}
	again, err := generate(got, []string{"a", "b"})
	if err != nil || !bytes.Equal(again, got) {
		t.Errorf("generate is not idempotent: %v\n%s", err, again)
	}
	if _, err := generate([]byte("{}"), []string{"a"}); err == nil {
		t.Error("a schema without a profile key: want an error")
	}
}
