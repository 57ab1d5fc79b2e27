package wrapper

import (
	"bytes"
	"fmt"
)

// answerer replies to the terminal queries a TUI sends at start when no
// human terminal is there to answer them (stdin is not a terminal): without
// a reply some programs wait for seconds or forever. It recognises, across
// read boundaries, device attributes (DA1 `CSI c`, DA2 `CSI > c`), device
// status (`CSI 5 n`) and cursor position (`CSI 6 n`, `CSI ? 6 n`), and OSC
// 10/11 colour queries.
type answerer struct {
	cursor func() (col, row int) // 0-based; nil means the top-left corner
	state  int
	params []byte // bytes between CSI/OSC and the final byte, bounded
}

const (
	ansGround = iota
	ansEsc
	ansCSI
	ansOSC
	ansOSCEsc
)

const maxQueryParams = 32

// scan reads a chunk of the child's output and returns the replies it calls
// for (nil if none).
func (a *answerer) scan(p []byte) []byte {
	var out []byte
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch a.state {
		case ansGround:
			// Text is most of the output: jump to the next escape.
			k := bytes.IndexByte(p[i:], 0x1b)
			if k < 0 {
				return out
			}
			i += k
			a.state = ansEsc
		case ansEsc:
			switch b {
			case '[':
				a.state, a.params = ansCSI, a.params[:0]
			case ']':
				a.state, a.params = ansOSC, a.params[:0]
			case 0x1b:
			default:
				a.state = ansGround
			}
		case ansCSI:
			switch {
			case b >= 0x40 && b <= 0x7e:
				out = append(out, a.csi(b)...)
				a.state = ansGround
			case b == 0x1b:
				a.state = ansEsc
			case len(a.params) < maxQueryParams:
				a.params = append(a.params, b)
			default:
				a.state = ansGround
			}
		case ansOSC:
			switch {
			case b == 0x07:
				out = append(out, a.osc()...)
				a.state = ansGround
			case b == 0x1b:
				a.state = ansOSCEsc
			case len(a.params) < maxQueryParams:
				a.params = append(a.params, b)
			default:
				a.state = ansGround // a long OSC (a title) is no query
			}
		case ansOSCEsc:
			if b == '\\' {
				out = append(out, a.osc()...)
				a.state = ansGround
			} else if b == '[' {
				a.state, a.params = ansCSI, a.params[:0]
			} else {
				a.state = ansGround
			}
		}
	}
	return out
}

func (a *answerer) csi(final byte) []byte {
	params := string(a.params)
	switch {
	case final == 'c' && (params == "" || params == "0"):
		return []byte("\x1b[?62;22c") // a VT220 with ANSI colour
	case final == 'c' && (params == ">" || params == ">0"):
		return []byte("\x1b[>1;10;0c")
	case final == 'n' && params == "5":
		return []byte("\x1b[0n")
	case final == 'n' && (params == "6" || params == "?6"):
		col, row := 0, 0
		if a.cursor != nil {
			col, row = a.cursor()
		}
		if params == "?6" {
			return fmt.Appendf(nil, "\x1b[?%d;%d;1R", row+1, col+1)
		}
		return fmt.Appendf(nil, "\x1b[%d;%dR", row+1, col+1)
	}
	return nil
}

func (a *answerer) osc() []byte {
	switch string(a.params) {
	case "10;?":
		return []byte("\x1b]10;rgb:ffff/ffff/ffff\x1b\\")
	case "11;?":
		return []byte("\x1b]11;rgb:0000/0000/0000\x1b\\")
	}
	return nil
}
