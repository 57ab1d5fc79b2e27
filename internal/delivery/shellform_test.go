package delivery

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shellState is a line a human left unfinished (a quote, a heredoc, a
// continuation) and what ends it after relay's line; want is what the
// program prints when relay's line was taken as the text it is (inside the
// quote) or as a comment, given that line.
type shellState struct {
	name          string
	before, after string
	want          func(line string) string
}

// bashStates: relay's line typed while bash waits for the rest of a
// command. History expansion is on, as in an interactive bash.
var bashStates = []shellState{
	{"top level", "", "echo end", func(string) string { return "end\n" }},
	{"open single quote", "printf '%s\\n' 'open", "'", func(l string) string { return "open\n" + l + "\n\n" }},
	{"open double quote", `printf '%s\n' "open`, `"`, func(l string) string { return "open\n" + l + "\n\n" }},
	{"heredoc", "cat <<EOF", "EOF", func(l string) string { return l + "\n" }},
	{"backslash continuation", `echo cont \`, "echo end", func(string) string { return "cont\nend\n" }},
	{"backslash in a word", `echo cont\`, "echo end", func(string) string { return "cont\nend\n" }},
	{"command substitution", "echo \"sub $(", ")\"", func(string) string { return "sub \n" }},
	{"open if", "if true; then", "echo end; fi", func(string) string { return "end\n" }},
	{"pipe", "echo piped |", "cat", func(string) string { return "piped\n" }},
	{"double quote in a heredoc word", "cat <<EOF\n\"", "EOF", func(l string) string { return "\"\n" + l + "\n" }},
}

// pythonStates: relay's line typed into python3's REPL while a statement is
// unfinished.
var pythonStates = []shellState{
	{"top level", "", "print('end')", func(string) string { return "end\n" }},
	{"open triple double quote", `x = """open`, "\"\"\"\nprint(x)", func(l string) string { return "open\n" + l + "\n\n" }},
	{"open triple single quote", "x = '''open", "'''\nprint(x)", func(l string) string { return "open\n" + l + "\n\n" }},
	{"open bracket", "x = (1,", ")\nprint(x)", func(string) string { return "(1,)\n" }},
}

// runLines feeds lines to argv's stdin in dir and returns what it printed.
func runLines(t *testing.T, dir string, input string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	cmd.Env = append(os.Environ(), "PS1=", "PS2=", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = time.Second
	_ = cmd.Run() // a syntax error is no failure here: what ran is
	if ctx.Err() != nil {
		t.Fatalf("%v did not end: input %q", argv, input)
	}
	return out.String()
}

// checkShellForm types every shell form of body into bash and python3 in
// each unfinished state and checks that the line was read as text or a
// comment, never as code: the output is what it would be for any inert
// line, and no file appeared in the folder.
func checkShellForm(t *testing.T, from, body string, python bool) {
	t.Helper()
	f := Form{Shell: true}
	lines := []string{f.Message(from, "m-1", body), f.Notice(body), f.Own(body),
		f.MessageFrom(Sender{Name: from, Human: true, ToAll: true}, "m-2", body)}
	type interp struct {
		argv   []string
		states []shellState
		prefix string
	}
	interps := []interp{{[]string{"bash", "--norc", "--noprofile"}, bashStates, "set -o history -H\n"}}
	if python {
		interps = append(interps, interp{[]string{"python3", "-q", "-i"}, pythonStates, ""})
	}
	for _, in := range interps {
		// One run per program: every state, each closed after relay's
		// line, one after the other.
		dir := t.TempDir()
		var input, want strings.Builder
		input.WriteString(in.prefix)
		for _, st := range in.states {
			for _, line := range lines {
				if st.before != "" {
					input.WriteString(st.before + "\n")
				}
				input.WriteString(line + "\n" + st.after + "\n")
				want.WriteString(st.want(line))
			}
		}
		if got := runLines(t, dir, input.String(), in.argv...); got != want.String() {
			t.Fatalf("%s: body %q typed as %q:\n got %q\nwant %q", in.argv[0], body, lines[0], got, want.String())
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Fatalf("%s: body %q created %s", in.argv[0], body, filepath.Join(dir, ents[0].Name()))
		}
	}
}

// hostileShellBodies close a human's quote, heredoc or continuation, or
// expand something, in the shells and REPLs relay types into (issue 30).
var hostileShellBodies = []string{
	"ok'; touch PWNED #",
	"ok\"; touch PWNED #",
	"x\"\"\"; __import__('os').system('touch PWNED') #",
	"x'''; __import__('os').system('touch PWNED') #",
	"$(touch PWNED)",
	"`touch PWNED`",
	"${x:=$(touch PWNED)}",
	"\\\ntouch PWNED",
	"line\nEOF\ntouch PWNED",
	"EOF",
	"!!; touch PWNED",
	")\ntouch PWNED\n(",
	"); touch PWNED; (",
	"'\"`$\\!#;&|<>(){}[]*~^%",
	"\u202e; touch PWNED",
	"a\x1b[201~; touch PWNED",
	"100% sure: it's done",
}

// TestShellFormInert: a peer's body typed into bash or python3 left in an
// unfinished state never runs (issue 30: the body closed the human's open
// quote and `touch` ran).
func TestShellFormInert(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	_, err := exec.LookPath("python3")
	for _, body := range hostileShellBodies {
		// python3 is slow to start: only the bodies aimed at it.
		py := strings.Contains(body, "__import__") || strings.HasPrefix(body, "'\"")
		checkShellForm(t, "Mallory", body, py && err == nil)
	}
	checkShellForm(t, "Mal'lory$(touch PWNED)", "hi", err == nil)
}

// FuzzShellForm: for any body and sender name, the shell form of a message
// or a notice, typed into bash (and python3) in an unfinished state, is
// read as text or as a comment and runs nothing.
func FuzzShellForm(f *testing.F) {
	if _, err := exec.LookPath("bash"); err != nil {
		f.Skip("no bash")
	}
	for _, b := range hostileShellBodies {
		f.Add("Mallory", b)
	}
	f.Fuzz(func(t *testing.T, from, body string) {
		checkShellForm(t, from, body, false)
	})
}
