//go:build !linux

package delivery

// MaxShellLine is the most bytes relay types as one line into a program
// that reads the terminal line by line (a plain shell), the Enter not
// counted. The BSD terminal driver (macOS included) keeps at most MAX_CANON
// (1024) bytes of a line in canonical mode; 1000 leaves room for
// bracketed-paste markers (12 bytes).
const MaxShellLine = 1000
