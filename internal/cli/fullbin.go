package cli

import (
	"os"
	"path/filepath"
)

// FullBinary is the file name of the full relay binary (the default build),
// which `make install` puts beside the lean one (the lean build tag, named
// relay): the lean relay runs it for the commands it lacks (full_lean.go).
const FullBinary = "relay-hub"

// wrapperBinary is the relay that starts wrappers for a team: the lean
// relay beside exe when exe is FullBinary (installed as the pair), else exe
// itself. A team's wrappers then cost their machine what `relay wrap` run
// by hand costs.
func wrapperBinary(exe string) string {
	if filepath.Base(exe) != FullBinary {
		return exe
	}
	lean := filepath.Join(filepath.Dir(exe), "relay")
	if fi, err := os.Stat(lean); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return lean
	}
	return exe
}
