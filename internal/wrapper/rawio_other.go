//go:build !linux

package wrapper

import (
	"io"
	"os"
	"syscall"
)

// rawCalls: elsewhere the output loop makes Go's ordinary system calls.
const rawCalls = false

func rawRead(uintptr, []byte) (int, syscall.Errno)  { return 0, syscall.ENOSYS }
func rawWrite(uintptr, []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }

// humanScreen is the human's terminal for the output loop: here, out
// itself (errNoRawTerm).
func humanScreen(*os.File) (io.WriteCloser, error) { return nil, errNoRawTerm }

// No rawWriter is made here.
func (w rawWriter) Close() error { return syscall.Close(w.fd) }

// stdinAgain: here the human's stdin is always polled (stdinReader).
func stdinAgain(*os.File) *os.File { return nil }
