//go:build !linux

package wrapper

import (
	"os"

	"github.com/creack/pty"
)

// openPty opens a new pty of cols×rows: its master on the runtime's
// netpoller where it can be (pollErr says why not), and its peer, for the
// child.
func openPty(cols, rows int) (ptmx, peer *os.File, pollErr, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pty.Setsize(m, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		m.Close()
		t.Close()
		return nil, nil, nil, err
	}
	p, pollErr := pollable(m)
	return p, t, pollErr, nil
}
