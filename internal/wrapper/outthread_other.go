//go:build !linux

package wrapper

import (
	"os"
	"sync"
	"time"
)

// threadReader is made on Linux only (outthread_linux.go); elsewhere the
// output loop reads through the netpoller alone.
type threadReader struct{}

func newThreadReader(*os.File) *threadReader { return nil }

func (r *threadReader) drainBy(time.Time) {}

var errQuiet error

func (r *threadReader) flood([]byte, func([]byte)) error { return nil }

// pumpTo is used on Linux only (outpump_linux.go).
type pumpTo struct {
	fd        int
	mu        *sync.Mutex
	slow, tap func(p []byte)
}

func (r *threadReader) pump([]byte, pumpTo) error { return nil }
