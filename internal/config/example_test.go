package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/relayhq/relay/internal/config"
)

// Load merges the files with the environment and flags and says where
// each value came from.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "relay-example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, ".relay"), 0o755)
	os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte("workspace = \"payments\"\n[delivery]\nmode = \"queue\"\n"), 0o644)

	env := map[string]string{"RELAY_WORKSPACE": "staging"}
	c, err := config.Load(config.Sources{
		ProjectDir: dir,
		Env:        func(k string) string { return env[k] },
		Flags:      config.Flags{Name: "alice"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"name", "workspace", "delivery.mode", "delivery.human_quiet_ms"} {
		src := c.Source(key)
		if src.Kind == config.FromFile {
			src.File = filepath.Base(src.File) // the temporary folder varies
		}
		fmt.Printf("%s from %s\n", key, src)
	}
	fmt.Println(c.Name, c.Workspace, c.Delivery.Mode, c.Delivery.HumanQuiet)
	// Output:
	// name from flag --name
	// workspace from env RELAY_WORKSPACE
	// delivery.mode from config.toml:3
	// delivery.human_quiet_ms from default
	// alice staging queue 2s
}

// A mistake names the file, line, column and key, with a suggestion.
func ExampleError() {
	dir, _ := os.MkdirTemp("", "relay-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte("[delivery]\nmdoe = \"wait\"\n"), 0o644)
	_, err := config.Load(config.Sources{UserFile: path})
	fmt.Println(filepath.Base(err.Error()))
	// Output: config.toml:2:1: delivery.mdoe: unknown key (did you mean "mode"?)
}
