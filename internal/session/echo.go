package session

import (
	"bytes"
	"strings"
)

// A shell gets several injections at once (shellPipeline): the next one
// goes while the echo of those before is on its way. The exact sign that
// the shell took what was typed (the echo of the last line and the prompt
// at the end of the screen, see readiness.met) is only ever seen for the
// latest injection, since the echo of the next follows at once: waiting for
// it alone would stop typing until the whole pipeline drained, every time.
// The echo window counts instead the line ends the terminal echoed since
// the first injection of the window, and tells, for each injection but the
// latest, once all its lines were echoed: the terminal's line discipline
// took them, and the next may go. The latest still waits for the exact
// sign. A count too high (a program's own output) only lets the next
// injection go early into the terminal's queue, where it waits whole.

// owed is one injection of the window: its number and the line ends the
// window must have seen by the end of its echo.
type owed struct {
	n    uint64
	need int
}

// echoWindow is the state of the count; readiness holds it under its lock.
type echoWindow struct {
	owed    []owed
	seen    int    // line ends echoed since the window began
	reached uint64 // the last injection all of whose lines were echoed, not yet told
}

// lineEnds is how many line ends the terminal echoes for text typed and
// its Enter.
func lineEnds(text string) int {
	return strings.Count(text, "\r") + strings.Count(text, "\n") + 1
}

// begin starts a new window with injection n of text (not pipelined: the
// shell showed it took everything before).
func (w *echoWindow) begin(n uint64, text string) {
	w.owed = append(w.owed[:0], owed{n: n, need: lineEnds(text)})
	w.seen, w.reached = 0, 0
}

// add adds injection n of text, typed before the shell showed it took the
// ones before.
func (w *echoWindow) add(n uint64, text string) {
	need := lineEnds(text)
	if k := len(w.owed); k > 0 {
		need += w.owed[k-1].need
	}
	w.owed = append(w.owed, owed{n: n, need: need})
}

// took counts the line ends of a chunk of output, and notes the last
// injection (the latest excepted) whose lines are all echoed by now.
func (w *echoWindow) took(chunk []byte) {
	if len(w.owed) < 2 {
		return
	}
	w.seen += bytes.Count(chunk, []byte{'\n'})
	for len(w.owed) > 1 && w.owed[0].need <= w.seen {
		w.reached = w.owed[0].n
		w.owed = w.owed[1:]
	}
}

// take returns the injection reached since the last call (0: none).
func (w *echoWindow) take() uint64 {
	n := w.reached
	w.reached = 0
	return n
}
