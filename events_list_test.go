package relay_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"testing"

	"github.com/relayhq/relay"
	"github.com/relayhq/relay/internal/config"
)

// TestEventsListedOnce: Events is config.Events, the one list of the
// events (issue 33: the root listed its constants again), and every Event
// constant this package declares is one of them.
func TestEventsListedOnce(t *testing.T) {
	t.Parallel()
	var want []relay.Event
	for _, e := range config.Events() {
		want = append(want, relay.Event(e))
	}
	if got := relay.Events(); !slices.Equal(got, want) {
		t.Errorf("Events() = %v, want config.Events() %v", got, want)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Event" {
					continue
				}
				for i, name := range vs.Names {
					n++
					sel, ok := vs.Values[i].(*ast.CallExpr)
					if !ok || len(sel.Args) != 1 {
						t.Errorf("%s: const %s is not Event(config.…)", fset.Position(name.Pos()), name.Name)
						continue
					}
					s, _ := ast.Unparen(sel.Args[0]).(*ast.SelectorExpr)
					if s == nil || s.Sel.Name != name.Name || types.ExprString(s.X) != "config" {
						t.Errorf("%s: const %s is not Event(config.%s)", fset.Position(name.Pos()), name.Name, name.Name)
					}
				}
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d Event constants in package relay, %d events in config.Events()", n, len(want))
	}
}
