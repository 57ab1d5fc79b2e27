package scanner_test

import (
	"fmt"
	"time"

	"github.com/relayhq/relay/internal/scanner"
)

func Example() {
	// A hand-moved clock: rows count as final once they have been quiet
	// for the cues' QuietTime.
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := scanner.New(scanner.Options{Cols: 60, Rows: 10, Now: func() time.Time { return now }})
	cancel := s.Subscribe(func(e scanner.Event) {
		if e.Kind == scanner.EventCommand {
			fmt.Printf("row %d: @%s:%s %s\n", e.Row, e.Command.NS, e.Command.Target, e.Command.Body)
		}
	})
	defer cancel()

	// The agent writes a command in two pieces, then moves on.
	s.Write([]byte("● I'll ask Bob.\r\n\r\n  @relay:Bob Please run"))
	now = now.Add(time.Second)
	s.Tick() // half a line: nothing yet
	s.Write([]byte(" the tests.\r\n\r\n  Waiting.\r\n"))
	now = now.Add(time.Second)
	s.Tick()
	// Drawing the same frame again does not fire it again.
	s.Write([]byte("\x1b[H\x1b[2J● I'll ask Bob.\r\n\r\n  @relay:Bob Please run the tests.\r\n\r\n  Waiting.\r\n"))
	now = now.Add(time.Second)
	s.Tick()
	fmt.Println("busy:", s.State().Busy)
	// Output:
	// row 2: @relay:Bob Please run the tests.
	// busy: false
}
