// Command schema writes the parts of docs/config.schema.json that depend
// on which agent CLIs relay knows, from the registry
// (internal/agents/registry): today the `profile` key, whose description
// and examples name every profile. The rest of the schema is written by
// hand. TestSchemaIsGenerated fails when the file differs from what the
// registry gives, so a CLI added to the registry needs only
//
//	go generate ./internal/tools/schema
//
// (or `go run ./internal/tools/schema -w docs/config.schema.json` from the
// module's root). Without -w it prints the schema.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/relayhq/relay/internal/agents/registry"
)

//go:generate go run . -w ../../../docs/config.schema.json

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "schema:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	write := fs.Bool("w", false, "write the result to the file instead of printing it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := "docs/config.schema.json"
	if fs.NArg() > 1 {
		return errors.New("want at most one argument, the schema's path")
	}
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	updated, err := generate(old, registry.Names())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !*write {
		_, err := out.Write(updated)
		return err
	}
	if bytes.Equal(old, updated) {
		return nil
	}
	return os.WriteFile(path, updated, 0o644)
}

// profileKey is the top-level `profile` property, as the file indents it:
// from its key to the brace that closes it.
var profileKey = regexp.MustCompile(`(?s)\n    "profile": \{\n.*?\n    \}`)

// generate returns schema with the CLI-dependent parts written from the
// profile names (sorted, as registry.Names gives them).
func generate(schema []byte, names []string) ([]byte, error) {
	locs := profileKey.FindAllIndex(schema, -1)
	if len(locs) != 1 {
		return nil, fmt.Errorf("want one top-level \"profile\" property, found %d", len(locs))
	}
	desc, _ := json.Marshal("Force an agent profile (" + strings.Join(names, ", ") +
		") instead of choosing it from the command (RELAY_PROFILE, --profile).")
	examples, _ := json.Marshal(names)
	block := "\n    \"profile\": {\n" +
		"      \"description\": " + string(desc) + ",\n" +
		"      \"$ref\": \"#/$defs/name\",\n" +
		"      \"examples\": " + strings.ReplaceAll(string(examples), ",", ", ") + "\n" +
		"    }"
	var b bytes.Buffer
	b.Write(schema[:locs[0][0]])
	b.WriteString(block)
	b.Write(schema[locs[0][1]:])
	if !json.Valid(b.Bytes()) {
		return nil, errors.New("the generated schema is not valid JSON")
	}
	return b.Bytes(), nil
}
