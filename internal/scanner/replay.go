package scanner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// replayEpoch is the clock's start in a replay: the Unix epoch, so that an
// event's Time.Unix() is its offset into the recording (always zero for raw
// bytes, which carry no times).
func replayEpoch() time.Time { return time.Unix(0, 0).UTC() }

// ReplayOptions configures Replay. Zero Cols/Rows mean: the asciicast
// header's size, else the size in Name (NAME-100x30.raw), else 80x24.
type ReplayOptions struct {
	Cols, Rows int
	// Name is the recording's file name, for its size and for errors.
	Name       string
	Namespaces *patterns.Namespaces
	Cues       Cues
}

// ErrBadRecording marks a recording that cannot be read (a broken asciicast
// event, an unsupported version).
var ErrBadRecording = errors.New("bad recording")

// maxCastLine bounds one asciicast line (one event's output).
const maxCastLine = 64 << 20

// rawChunk is how much of a raw recording is fed at once.
const rawChunk = 32 << 10

// Replay runs a recorded terminal stream through a Scanner and hands every
// event to fn. The recording is raw bytes or an asciicast v2 file (detected
// by its first line: a JSON object with "version": 2); an asciicast's event
// times drive the scanner's clock and its "r" events resize it. The end of
// the recording makes everything final. Event times count from the Unix
// epoch: e.Time.Sub(time.Unix(0, 0)) is the offset into an asciicast (zero
// for raw bytes).
func Replay(ctx context.Context, r io.Reader, opts ReplayOptions, fn func(Event)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(1)
	if len(head) == 1 && head[0] == '{' {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		var hdr struct {
			Version *int `json:"version"`
			Width   int  `json:"width"`
			Height  int  `json:"height"`
		}
		if json.Unmarshal(line, &hdr) == nil && hdr.Version != nil {
			if *hdr.Version != 2 {
				return fmt.Errorf("line 1: asciicast version %d, want 2: %w", *hdr.Version, ErrBadRecording)
			}
			return replayCast(ctx, br, hdr.Width, hdr.Height, opts, fn)
		}
		// Not an asciicast header: raw bytes that happen to start with '{'.
		return replayRaw(ctx, io.MultiReader(bytes.NewReader(line), br), opts, fn)
	}
	return replayRaw(ctx, br, opts, fn)
}

func (o ReplayOptions) scanner(cols, rows int, now func() time.Time) *Scanner {
	if o.Cols > 0 {
		cols = o.Cols
	}
	if o.Rows > 0 {
		rows = o.Rows
	}
	if c, r, ok := SizeFromName(o.Name); ok {
		if cols <= 0 {
			cols = c
		}
		if rows <= 0 {
			rows = r
		}
	}
	return New(Options{Cols: cols, Rows: rows, Namespaces: o.Namespaces, Cues: o.Cues, Now: now})
}

func replayRaw(ctx context.Context, r io.Reader, opts ReplayOptions, fn func(Event)) error {
	now := replayEpoch()
	s := opts.scanner(0, 0, func() time.Time { return now })
	// The clock is made up (see rawFramePause): events carry no time.
	defer s.Subscribe(func(e Event) {
		e.Time = replayEpoch()
		fn(e)
	})()
	buf := make([]byte, rawChunk)
	var carry []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		data := append(carry, buf[:n]...)
		// Raw bytes carry no times: a frame boundary stands for a pause
		// long enough for the scanner to read the frame, so commands that
		// a TUI later scrolls away by redrawing are still seen.
		frames := splitFrames(data)
		carry = append([]byte(nil), frames[len(frames)-1]...)
		for _, f := range frames[:len(frames)-1] {
			s.Write(f)
			now = now.Add(rawFramePause)
			s.Tick()
		}
		if len(carry) > rawChunk {
			s.Write(carry)
			carry = carry[:0]
		}
		if errors.Is(err, io.EOF) {
			s.Write(carry)
			s.Flush()
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
	}
}

// rawFramePause is the time a raw replay lets pass at each frame boundary:
// longer than any profile's QuietTime.
const rawFramePause = 10 * time.Second

// splitFrames cuts a raw stream where a full-screen program most likely
// finished one frame and started the next: before each cursor-home
// (ESC[H, where Claude Code starts its redraws), before each run of
// erase-line-and-up (ESC[2K ESC[1A, where Gemini CLI's renderer repaints
// its live area) and after each end of a synchronized update (ESC[?2026l,
// Codex). The last element is the
// unfinished rest.
func splitFrames(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i+2 < len(data); i++ {
		if data[i] != 0x1b || data[i+1] != '[' {
			continue
		}
		switch {
		case data[i+2] == 'H', bytes.HasPrefix(data[i:], []byte("\x1b[2K\x1b[1A")) && !bytes.HasSuffix(data[:i], []byte("\x1b[1A")):
			if i > start {
				out = append(out, data[start:i])
				start = i
			}
		case bytes.HasPrefix(data[i:], []byte("\x1b[?2026l")):
			end := i + len("\x1b[?2026l")
			out = append(out, data[start:end])
			start = end
		}
	}
	return append(out, data[start:])
}

func replayCast(ctx context.Context, br *bufio.Reader, width, height int, opts ReplayOptions, fn func(Event)) error {
	now := replayEpoch()
	s := opts.scanner(width, height, func() time.Time { return now })
	defer s.Subscribe(fn)()
	for lineNo := 2; ; lineNo++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			at, code, data, perr := parseCastEvent(line)
			if perr != nil {
				return fmt.Errorf("line %d: %v: %w", lineNo, perr, ErrBadRecording)
			}
			if t := replayEpoch().Add(at); t.After(now) {
				// Time passed with no output: rows that were quiet long
				// enough by now are final before the next event changes them.
				now = t
				s.Tick()
			}
			switch code {
			case "o":
				s.Write([]byte(data))
			case "r":
				c, r, ok := parseSize(data)
				if !ok {
					return fmt.Errorf("line %d: resize event %q, want COLSxROWS: %w", lineNo, data, ErrBadRecording)
				}
				s.Resize(c, r)
			}
		}
		if errors.Is(err, io.EOF) {
			s.Flush()
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
}

// readLine reads one line without its line break, up to maxCastLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxCastLine {
			return nil, fmt.Errorf("line longer than %d bytes: %w", maxCastLine, ErrBadRecording)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(out, "\r\n"), err
	}
}

// parseCastEvent reads [time, code, data].
func parseCastEvent(line []byte) (time.Duration, string, string, error) {
	var ev []json.RawMessage
	if err := json.Unmarshal(line, &ev); err != nil || len(ev) < 3 {
		return 0, "", "", fmt.Errorf("want an event [time, code, data], got %.60q", line)
	}
	var secs float64
	var code, data string
	if err := json.Unmarshal(ev[0], &secs); err != nil || secs < 0 || math.IsNaN(secs) || secs > 1e9 {
		return 0, "", "", fmt.Errorf("event time %.30s is not a number of seconds", ev[0])
	}
	if err := json.Unmarshal(ev[1], &code); err != nil {
		return 0, "", "", fmt.Errorf("event code %.30s is not a string", ev[1])
	}
	if err := json.Unmarshal(ev[2], &data); err != nil {
		return 0, "", "", fmt.Errorf("event data %.30s is not a string", ev[2])
	}
	return time.Duration(secs * float64(time.Second)), code, data, nil
}

var sizeInName = lazyre.New(`-(\d{1,4})x(\d{1,4})(\.[^.]*)?$`)

// SizeFromName reads a terminal size from a recording's file name, such as
// multi-80x24.raw or session-120x40.cast.
func SizeFromName(name string) (cols, rows int, ok bool) {
	m := sizeInName().FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return 0, 0, false
	}
	cols, _ = strconv.Atoi(m[1])
	rows, _ = strconv.Atoi(m[2])
	return cols, rows, cols > 0 && rows > 0
}

func parseSize(s string) (cols, rows int, ok bool) {
	c, r, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	cols, err1 := strconv.Atoi(c)
	rows, err2 := strconv.Atoi(r)
	return cols, rows, err1 == nil && err2 == nil && cols > 0 && rows > 0 && cols <= 4096 && rows <= 4096
}
