package relay_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesImportOnlyPublic: the examples are written as a program
// outside this module would be, so they may import relay and bus alone (the
// other packages are internal, or about to be: scripts/move-internal).
func TestExamplesImportOnlyPublic(t *testing.T) {
	const module = "github.com/relayhq/relay"
	public := map[string]bool{module: true, module + "/bus": true}
	files, err := filepath.Glob("examples/*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if (path == module || strings.HasPrefix(path, module+"/")) && !public[path] {
				t.Errorf("%s imports %s; an outside program could not", name, path)
			}
		}
	}
}
