// Command agent is the scripted agent that the latency benchmark wraps with
// relay: no model, just a program that writes @relay: lines on cue and
// records, with a timestamp, each message typed into it.
//
//	agent send -ctl FIFO -to Bob   # for each line "N S" read from FIFO, writes
//	                               # N paragraphs "@relay:Bob seq=S.. t=NANOS"
//	agent recv -out FIFO [-raw]    # for each "seq=S t=NANOS" in a line read from
//	                               # stdin, writes "S NANOS READNANOS" to FIFO
//
// Times are time.Now().UnixNano() in both processes: one machine, one clock.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: agent send|recv [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "send":
		err = send(os.Args[2:])
	case "recv":
		err = recv(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q (want send or recv)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// send writes @relay: paragraphs on cue from the control FIFO until it
// closes. Each cue's paragraphs go out in one write, each stamped just
// before that write.
func send(args []string) error {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	ctl := fs.String("ctl", "", "control FIFO: lines \"N S\" (send N messages numbered from S)")
	to := fs.String("to", "Bob", "the recipient")
	pad := fs.Int("pad", 0, "bytes of filler added to each body")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*ctl)
	if err != nil {
		return fmt.Errorf("open control FIFO: %w", err)
	}
	defer f.Close()
	filler := strings.Repeat("x", *pad)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n, s int
		if _, err := fmt.Sscan(sc.Text(), &n, &s); err != nil {
			return fmt.Errorf("bad cue %q: %w", sc.Text(), err)
		}
		var b bytes.Buffer
		now := time.Now().UnixNano()
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "@relay:%s seq=%d t=%d %s\n\n", *to, s+i, now, filler)
		}
		if _, err := os.Stdout.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

var stamp = regexp.MustCompile(`seq=(\d+) t=(\d+)`)

// recv records every stamped message typed into it. With -raw the
// terminal is put in raw mode (no 4,095-byte canonical line limit) and a
// short "got" line stands in for the echo, so that the screen still moves.
func recv(args []string) error {
	fs := flag.NewFlagSet("recv", flag.ContinueOnError)
	out := fs.String("out", "", "FIFO (or file) that receives \"seq sent read\" lines")
	raw := fs.Bool("raw", false, "read the terminal in raw mode")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("open record FIFO: %w", err)
	}
	defer w.Close()
	if *raw && term.IsTerminal(int(os.Stdin.Fd())) {
		old, err := term.MakeRaw(int(os.Stdin.Fd()))
		if err != nil {
			return err
		}
		defer term.Restore(int(os.Stdin.Fd()), old)
	}
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := readLine(r)
		read := time.Now().UnixNano()
		if len(line) > 0 {
			var b bytes.Buffer
			for _, m := range stamp.FindAllSubmatch(line, -1) {
				seq, _ := strconv.ParseInt(string(m[1]), 10, 64)
				sent, _ := strconv.ParseInt(string(m[2]), 10, 64)
				fmt.Fprintf(&b, "%d %d %d\n", seq, sent, read)
			}
			if b.Len() > 0 {
				if _, err := w.Write(b.Bytes()); err != nil {
					return err
				}
				if *raw {
					fmt.Printf("got %d\r\n", bytes.Count(b.Bytes(), []byte("\n")))
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to a line break, CR (raw mode) or LF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return line, err
		}
		if c == '\r' || c == '\n' {
			return line, nil
		}
		line = append(line, c)
	}
}
