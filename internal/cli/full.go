//go:build !lean

package cli

import "github.com/relayhq/relay/internal/config"

// leanWrap does nothing in the full build; see full_lean.go.
func leanWrap(*Env, *config.Config, *wrapOptions, string, []string) error { return nil }
