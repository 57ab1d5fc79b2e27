package session

import (
	"context"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/scanner"
)

// A plain shell (a profile that is no model) is ready for the next
// injection as soon as it echoed the line relay typed and its prompt is
// back, or, for a program that shows no prompt, as soon as the typed line
// was echoed: not after its screen has been quiet for QuietTime (about
// 0.6 s a message). The readiness stage watches the screen after each
// chunk of output the screen model took, only between relay's Enter and
// that moment; screen quiet stays the fallback.

// echoTail is how many characters of the typed line's end are looked for
// on screen: enough to tell it apart, short enough that a terminal's
// wrapping of a long line rarely matters (white space is ignored).
const echoTail = 48

// expect is what the screen must show for the shell to be ready again.
type expect struct {
	typed  string // the end of the last typed line, white space removed
	prompt string // the prompt row before typing, white space removed; "" for none
	n      uint64 // the delivery queue's number of the injection (delivery.Injection.N)
}

// readiness watches a shell's screen for the return of its prompt after an
// injection. Its methods are safe for concurrent use.
type readiness struct {
	mu    sync.Mutex
	armed *expect
	last  string // the typed tail of the last injection, to tell an echo from a prompt
	// lineEnd: the last chunk of output the screen took ended with a line
	// break. Without a prompt, the echo of relay's Enter is the sign that
	// the line reached the program; the echo of the text alone is not.
	lineEnd bool
	echo    echoWindow // the pipelined injections whose echo is counted (echo.go)
}

// took notes the end of a chunk of output the screen took.
func (r *readiness) took(chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	r.mu.Lock()
	c := chunk[len(chunk)-1]
	r.lineEnd = c == '\n' || c == '\r'
	r.echo.took(chunk)
	r.mu.Unlock()
}

// shellReady reports whether the agent's readiness after an injection is
// read off its prompt (a plain shell) rather than its screen's quiet.
func (s *Session) shellReady() bool { return !s.spec.prof.Model }

// expectFor returns what the screen must show once the shell took text,
// typed while the screen showed before.
func (r *readiness) expectFor(before string, n uint64, text string) *expect {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.echo.begin(n, text)
	e := &expect{typed: tail(squeeze(lastLine(text)), echoTail), prompt: squeeze(lastRow(before)), n: n}
	if e.prompt == "" || (r.last != "" && strings.HasSuffix(squeeze(before), r.last)) {
		// The screen before typing is blank or ends with the echo of
		// relay's last line (wrapped over rows, maybe): a program
		// without a prompt.
		e.prompt = ""
	}
	r.last = e.typed
	return e
}

// expectAfter returns what the screen must show once the shell took text,
// typed while the expectation pending was not met yet: the same prompt
// after the end of text.
func (r *readiness) expectAfter(pending *expect, n uint64, text string) *expect {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.echo.add(n, text)
	e := &expect{typed: tail(squeeze(lastLine(text)), echoTail), prompt: pending.prompt, n: n}
	r.last = e.typed
	return e
}

// echoed returns the last injection of the pipeline, the latest
// excepted, whose lines the terminal has all echoed since the last call
// (0: none).
func (r *readiness) echoed() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.echo.take()
}

// disarm stops watching and returns what was watched for (nil: nothing).
func (r *readiness) disarm() *expect {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.armed
	r.armed = nil
	return e
}

// arm starts watching for e; nil stops watching.
func (r *readiness) arm(e *expect) {
	r.mu.Lock()
	r.armed = e
	r.mu.Unlock()
}

// met reports whether the screen text shows what the armed expectation
// waits for, and disarms it when it does; it returns the expectation met.
func (r *readiness) met(screenText func() string) (*expect, bool) {
	r.mu.Lock()
	e, lineEnd := r.armed, r.lineEnd
	r.mu.Unlock()
	if e == nil || e.typed == "" || (e.prompt == "" && !lineEnd) {
		return nil, false
	}
	if !strings.HasSuffix(squeeze(screenText()), e.typed+e.prompt) {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.armed != e {
		return nil, false
	}
	r.armed = nil
	return e, true
}

// onOutput is called after the screen model took a chunk of the child's
// output: when the shell is ready again, the delivery queue hears it at
// once, for the injection whose echo it is (and those before it).
func (s *Session) onOutput() {
	if n := s.typing.ready.echoed(); n > 0 {
		s.inbox.queue.SettledThrough(n) // an earlier injection of the pipeline was taken
	}
	if e, ok := s.typing.ready.met(s.child.scr.Text); ok {
		s.inbox.queue.SettledThrough(e.n)
		s.do(func(st *state) {
			st.promptBack = true
			s.push(st)
		})
	}
}

// shellPipeline is how many injections relay types into a plain shell
// before its echo shows that it took them (delivery.Options.Pipeline): the
// terminal queues complete lines the shell has not read yet, each
// injection stays within the line limit, and at most this many are on
// their way at once (12,000 bytes, far below what the terminal holds).
const shellPipeline = 3

// beforeTyping notes, for a shell, what its screen shows before relay
// types text, and forgets that it was ready: what is typed now needs its
// own echo and prompt. It returns what to arm once the Enter is written.
// Typed while the echo of the injection before is still awaited (the
// queue pipelines), the prompt to wait for is that injection's: the
// screen shows its echo now, not a prompt.
func (s *Session) beforeTyping(injection *delivery.Injection, text string) *expect {
	if !s.shellReady() {
		return nil
	}
	s.typing.prompt.stop() // what the screen shows from now on may be relay's echo
	n, pipelined := injection.N, injection.Pipelined
	if pending := s.typing.ready.disarm(); pending != nil && pipelined {
		return s.typing.ready.expectAfter(pending, n, text)
	}
	s.do(func(st *state) { st.promptBack = false })
	return s.typing.ready.expectFor(s.child.scr.Text(), n, text)
}

// afterEnter starts watching for e, and looks once at once: the echo may
// have been read before the watch began.
func (s *Session) afterEnter(e *expect) {
	if e == nil {
		return
	}
	s.typing.ready.arm(e)
	s.onOutput()
}

// watchedSource is the child's output as the screen model reads it, with a
// call after each chunk was taken (when the model asks for the next, or
// says it took it: scanner.Taker).
type watchedSource struct {
	src   scanner.Source
	r     *readiness
	after func()
	last  []byte // the chunk handed out last, until the next call
}

func (w *watchedSource) Next(ctx context.Context) ([]byte, int64, error) {
	w.Taken()
	chunk, skipped, err := w.src.Next(ctx)
	w.last = chunk
	return chunk, skipped, err
}

// Taken runs the call for the chunk handed out last, once: at the next
// Next, or before that when the scanner says the chunk is on its screen
// and it leaves the output to pile up for a while (scanner.Taker).
func (w *watchedSource) Taken() {
	if len(w.last) > 0 {
		w.r.took(w.last)
		w.last = nil
		w.after()
	}
}

var _ scanner.Taker = (*watchedSource)(nil)

// watchOutput returns src with the readiness stage watching it, for a
// shell; src itself for a model CLI.
func (s *Session) watchOutput(src scanner.Source) scanner.Source {
	if !s.shellReady() {
		return src
	}
	return &watchedSource{src: src, r: &s.typing.ready, after: s.onOutput}
}

// lastLine returns the text after the last line break of s.
func lastLine(s string) string {
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// lastRow returns the last row of a screen's text that is not blank.
func lastRow(text string) string {
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	return lastLine(text)
}

// squeeze removes all white space: a line wrapped by the terminal reads
// the same as the line typed.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// tail returns the last n characters of s at most.
func tail(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := len(s)
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
