package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the file parser and the checks after
// it: they must never panic, and every mistake must name the file.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.toml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{"", "name = ", "[[hooks.Idle]]\n[[hooks.Idle.hooks]]\ncommand=[]", "[patterns.x]\nallow=[1]",
		"a.b.c = 1\n[a]\n", "[[a]]\n[[a.b]]\n[a.b.c]\n", "x = [{a = [{b = 1}]}]", "hooks = {Idle = [{hooks = [{command = 'x'}]}]}"} {
		f.Add([]byte(s))
	}
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.toml"
		pf, errs := parseFile(name, data)
		for _, e := range errs {
			if e.File != name {
				t.Fatalf("error without the file name: %#v", e)
			}
		}
		if pf == nil {
			return
		}
		a := &applier{c: Default(), f: pf, base: base, pat: map[string]int{}, setCmd: map[string]struct{}{}}
		_ = errs
		a.apply()
		for _, e := range a.errs {
			if e.File != name {
				t.Fatalf("error without the file name: %#v", e)
			}
		}
	})
}
