// Package procfs reads what Linux's /proc tells about processes: the files
// a process tree holds open, a process group's members and whether they
// are in the middle of something. relay uses it to find which session
// file an agent CLI writes, when the CLI does not say, and to let an agent
// act on what it read before a signal ends it. On other systems (macOS)
// every function returns ErrUnsupported and callers do without.
package procfs

import (
	"errors"
	"fmt"
)

// ErrUnsupported means this system has no /proc to read. It wraps
// errors.ErrUnsupported, so callers may test for either.
var ErrUnsupported = fmt.Errorf("no /proc on this system: %w", errors.ErrUnsupported)
