// Package mainstack grows the main goroutine's stack once, at the start
// of the package initialisation, while the stack is shallow. Import it
// for its effect, from package main only:
//
//	import _ "github.com/relayhq/relay/internal/mainstack"
//
// A goroutine's stack starts at 2 KB and doubles when a call needs more.
// Each doubling copies the stack, and the runtime walks every frame on it
// to move its pointers, reading each function's tables from the binary
// (page faults the first time). `relay wrap` doubled the main goroutine's
// stack four times, 2 to 32 KB: in nats.go's encoding/gob init, then deep
// in the flags and the hub link, about 4 % of its start-up CPU (issue 34,
// docs/performance.md). Here it grows to 32 KB in one copy of two frames.
//
// The package imports nothing, so the initialisation order (packages
// sorted by import path, each as soon as its imports are done) runs its
// init among the first: after the runtime's, before encoding/gob's.
// TestInitRunsEarly checks that.
//
// The stack stays grown for the start: the runtime shrinks a stack only
// during a garbage collection (halving it when a quarter is in use), and
// none runs during a start. It costs no memory a wrap does not use: the
// main goroutine reached 32 KB without it.
package mainstack

// frame is what grow asks for: with it the stack doubles from 4 to 32 KB
// at once (the runtime doubles until the frame fits).
const frame = 20 << 10

func init() { grow() }

// grow needs a frame of frame bytes.
//
//go:noinline
func grow() {
	var b [frame]byte
	touch(b[:])
}

// touch keeps grow's frame: one nothing reads would be dropped.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }
