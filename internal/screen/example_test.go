package screen_test

import (
	"fmt"

	"github.com/relayhq/relay/internal/screen"
)

// A TUI draws words with cursor addressing; the screen model reads them back
// as the user sees them.
func Example() {
	s := screen.NewWithOptions(screen.Options{
		Cols: 40, Rows: 3,
		OnTitle: func(title string) { fmt.Println("title:", title) },
	})
	s.Write([]byte("\x1b]0;✳ Claude Code\x07\x1b[?1049h\x1b[2J\x1b[H"))
	s.Write([]byte("@relay:Bob\x1b[12GPlease\x1b[19Grun\x1b[23Gthe\x1b[27Gtests"))
	s.Write([]byte("\x1b[3;1H\x1b[38;5;246m\xe2\x9d\xaf\x1b[39m"))
	fmt.Printf("%q\n", s.Line(0).Text)
	fmt.Printf("%q\n", s.Line(2).Text)
	fmt.Println(s.AltScreen())
	// Output:
	// title: ✳ Claude Code
	// "@relay:Bob Please run the tests"
	// "❯"
	// true
}

// Rows that scroll off the top of the main screen are the scrollback.
func ExampleOptions_onScrollOff() {
	s := screen.NewWithOptions(screen.Options{
		Cols: 20, Rows: 2,
		OnScrollOff: func(l screen.Line) { fmt.Println("scrollback:", l.Text) },
	})
	s.Write([]byte("first\r\nsecond\r\nthird\r\n"))
	fmt.Print(s.Text())
	// Output:
	// scrollback: first
	// scrollback: second
	// third
}
