package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestDocsExamples loads every ```toml block of the user documentation, so
// that the examples people copy are valid.
func TestDocsExamples(t *testing.T) {
	t.Parallel()
	block := regexp.MustCompile("(?s)```toml\n(.*?)```")
	ca, err := os.ReadFile(testutil.TLS(t, "hub.example.test").CA)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range []string{"../../docs/configuration.md", "../../docs/hooks.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllSubmatch(b, -1) {
			n++
			dir := writeTree(t, map[string]string{
				"home/.config/relay/token":   "t",
				"project/team.creds":         "c",
				"project/team-ca.pem":        string(ca),
				"project/.relay/config.toml": string(m[1]),
			})
			env := map[string]string{"HOME": filepath.Join(dir, "home")}
			if _, err := config.Load(config.Sources{ProjectDir: filepath.Join(dir, "project"), Env: func(k string) string { return env[k] }}); err != nil {
				t.Errorf("%s, toml block %d:\n%s\n%v", doc, i+1, m[1], err)
			}
		}
	}
	if n < 8 {
		t.Errorf("found only %d toml blocks", n)
	}
}
