// Package procfs reads what Linux's /proc tells about a process tree: the
// files its processes hold open. relay uses it to find which session file
// an agent CLI writes, when the CLI does not say. On other systems (macOS)
// OpenFiles returns ErrUnsupported and callers find the file another way.
package procfs

import (
	"errors"
	"fmt"
)

// ErrUnsupported means this system has no /proc to read. It wraps
// errors.ErrUnsupported, so callers may test for either.
var ErrUnsupported = fmt.Errorf("no /proc on this system: %w", errors.ErrUnsupported)
