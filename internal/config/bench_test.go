package config

import (
	"os"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

// BenchmarkDecodeBaseline is the floor for BenchmarkParse: go-toml decoding
// testdata/full.toml into a generic map, with no checks and no positions.
func BenchmarkDecodeBaseline(b *testing.B) {
	data, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var m map[string]any
		if err := toml.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse is one file's strict decoding, position index and checks
// (without the file system checks of paths).
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, errs := parseFile("full.toml", data)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		a := &applier{c: Default(), f: f, base: "testdata", pat: map[string]int{}, setCmd: map[string]struct{}{}}
		a.apply()
		if len(a.errs) > 0 {
			b.Fatal(a.errs)
		}
	}
}
