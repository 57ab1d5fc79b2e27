// Package qwen is the profile of Qwen Code (npm @qwen-code/qwen-code), a
// fork of Gemini CLI.
package qwen

import (
	"github.com/relayhq/relay/agents"
)

// Package is Qwen Code's npm package.
const Package = "@qwen-code/qwen-code"

// Profile is Qwen Code's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "qwen", CLI: "Qwen Code", Commands: []string{"qwen"},
		Paste: true, TypePrimer: true, Model: true, EscapeMentions: true,
		Version: func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		Pin:     &agents.Pin{Package: Package, Version: "0.24.4", Folder: "qwen-code", Bin: "qwen", VersionText: "0.24.4"},
		Offline: offline(),
	}
}
