package cli

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/logfile"
	"github.com/relayhq/relay/internal/statedir"
)

// openLog opens RELAY_HOME/logs/NAME.log for a command's diagnostics, so
// that nothing but the child ever writes to the human's terminal.
func openLog(home, name string) (*slog.Logger, func(), error) {
	dir, err := statedir.EnsureSub(home, "logs")
	if err != nil {
		return nil, nil, fmt.Errorf("log folder: %w", err)
	}
	path := filepath.Join(dir, name+".log")
	f, err := logfile.Open(path, 0)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}

// safeFileName returns name, or the base name of cmd, reduced to
// characters that are safe in a file name.
func safeFileName(name, cmd string) string {
	if name == "" {
		name = filepath.Base(cmd)
	}
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if name == "" {
		return "agent"
	}
	return name
}
