package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrCommandNotFound is returned by Run (and LookPath) when the command to
// wrap is not an executable file: nothing was started, no hub either.
var ErrCommandNotFound = errors.New("command not found")

// LookPath finds command as the child would: a name with a slash as it is
// (relative to dir), else in the PATH of env (nil: this process's). The
// error wraps ErrCommandNotFound and says where it looked.
func LookPath(command string, env []string, dir string) (string, error) {
	if command == "" {
		return "", fmt.Errorf("%w: no command", ErrCommandNotFound)
	}
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrCommandNotFound, command, err)
		}
		return p, nil
	}
	path, ok := os.LookupEnv("PATH")
	if env != nil {
		path, ok = "", false
		for _, kv := range env {
			if v, found := strings.CutPrefix(kv, "PATH="); found {
				path, ok = v, true
			}
		}
	}
	if !ok {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not in PATH (%s); install it or give its full path", ErrCommandNotFound, command, path)
}

// executable is nil when p is a file that someone may execute.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a folder")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New("is not executable")
	}
	return nil
}
