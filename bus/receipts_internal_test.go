package bus

import (
	"testing"
	"time"
)

// TestReceipterFlushEnds: flush returns without waiting out its time when
// nothing was posted, once what was posted before it was handled, and when
// the receipter was already stopped (a second Close).
func TestReceipterFlushEnds(t *testing.T) {
	t.Parallel()
	within := func(t *testing.T, what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: flush still waits after 30s", what)
		}
	}
	t.Run("nothing posted", func(t *testing.T) {
		r := newReceipter(nil)
		within(t, "nothing posted", func() { r.flush(time.Hour) })
	})
	t.Run("posted, then stopped", func(t *testing.T) {
		r := newReceipter(nil)
		first := make(chan struct{})
		r.post(posted{flushed: first}) // starts run; nothing to publish
		within(t, "after a post", func() { r.flush(time.Hour) })
		select {
		case <-first:
		default:
			t.Fatal("flush returned before what was posted before it was handled")
		}
		within(t, "second flush", func() { r.flush(time.Hour) })
	})
}
