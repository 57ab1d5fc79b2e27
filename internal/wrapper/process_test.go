package wrapper

import (
	"log/slog"
	"os"
	"testing"
)

// TestSendEOFAfterClose: the end of a piped stdin can come while Wait
// closes the child's terminal (the child exited at the same time); passing
// the EOF on then does nothing, where it used to crash the wrapper on a
// terminal mode it never read (seen 1 in ~50 runs of the human-line tests).
func TestSendEOFAfterClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	s := &Session{ptmx: r, input: newInput(w, nil, nil), log: slog.New(slog.DiscardHandler)}
	s.sendEOF() // must not panic
}
