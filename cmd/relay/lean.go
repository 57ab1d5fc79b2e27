//go:build lean

package main

// The lean relay wraps agents: one processor from its first init
// (internal/oneproc); the full one, which runs the hub, keeps them all.
import _ "github.com/relayhq/relay/internal/oneproc"
