package delivery

// MaxShellLine is the most bytes relay types as one line into a program
// that reads the terminal line by line (a plain shell), the Enter not
// counted. In canonical mode Linux keeps at most 4095 bytes of a line
// (N_TTY_BUF_SIZE, 4096, less one for the newline) and drops the rest
// without a word; 4000 leaves room for bracketed-paste markers (12 bytes)
// and anything else the line discipline sees.
const MaxShellLine = 4000
