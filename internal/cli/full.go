//go:build !lean

package cli

import (
	"os"
	"path/filepath"

	"github.com/relayhq/relay/internal/config"
)

// leanWrap does nothing in the full build; see full_lean.go.
func leanWrap(*Env, *config.Config, *wrapOptions, string, []string) error { return nil }

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
