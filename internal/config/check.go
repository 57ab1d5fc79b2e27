package config

import (
	"fmt"
	"os"
	"strings"
)

// CheckCommands looks for the programs of every handler and hook: a
// program path that does not exist, is a folder or is not executable is an
// *Error at the command's place in its file. A bare program name (looked
// up in the PATH of the agent's environment when it runs) and a Shell
// string (sh decides what it runs) are not checked. Load does not call it: a script may be created after relay
// starts; `relay config check` does.
func (c *Config) CheckCommands() Errors {
	var errs Errors
	check := func(key string, cmd Command) {
		if len(cmd.Argv) == 0 {
			return
		}
		if msg := checkProgram(cmd.Argv[0]); msg != "" {
			errs = append(errs, &Error{File: cmd.At.File, Line: cmd.At.Line, Col: cmd.At.Col, Key: key, Msg: msg})
		}
	}
	for _, p := range c.Patterns {
		check(p.Key+".command", p.Command)
	}
	for _, ev := range Events() {
		for gi, g := range c.Hooks[ev] {
			for hi, h := range g.Hooks {
				check(fmt.Sprintf("hooks.%s[%d].hooks[%d].command", ev, gi, hi), h.Command)
			}
		}
	}
	sortErrors(errs)
	return errs
}

// checkProgram says what is wrong with a program to run, or "".
func checkProgram(prog string) string {
	if !strings.ContainsRune(prog, '/') {
		// A bare name is looked up in PATH when it runs, whose PATH may
		// not be this one's: not checked.
		return ""
	}
	st, err := os.Stat(prog)
	switch {
	case err != nil:
		return fmt.Sprintf("%s does not exist", prog)
	case st.IsDir():
		return fmt.Sprintf("%s is a folder, not a program", prog)
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("%s is not executable (chmod +x %s)", prog, prog)
	}
	return ""
}
