package wrapper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// child is a started child: the pty's master, and the child's pid.
type child struct {
	ptmx *os.File
	// pollErr says why ptmx is not on the runtime's netpoller (a blocking
	// file: each read holds a thread), nil when it is.
	pollErr error
	pid     int
}

// startChild starts argv as os/exec and creack/pty's StartWithSize
// would: a new session (setsid) whose controlling terminal is a new pty
// of cols×rows, its stdin, stdout and stderr the pty's peer; dir and env
// as exec.Cmd's Dir and Env (nil env: the wrapper's own, with PWD set to
// dir; the last of a variable set twice wins). A name without a slash is
// looked up in PATH as exec.Command looks it up.
//
// It skips what those add for a wrapper that reaps its child with
// wait4(2) itself (waitLoop): os.StartProcess's pidfd, checked once per
// process with a throwaway clone, a cleanup per process and a file
// descriptor; and a pty opened blocking only to be made pollable after
// (1-2 % of `relay wrap -- true`'s CPU, docs/performance-start.md).
func startChild(argv []string, dir string, env []string, cols, rows int) (*child, error) {
	path := argv[0]
	if filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = lp
	}
	if env == nil {
		env = os.Environ()
		if dir != "" {
			if pwd, err := filepath.Abs(dir); err == nil {
				env = append(env, "PWD="+pwd)
			}
		}
	}
	env, err := dedupEnv(env)
	if err != nil {
		return nil, err
	}
	ptmx, peer, pollErr, err := openPty(cols, rows)
	if err != nil {
		return nil, err
	}
	defer peer.Close()
	fd := peer.Fd()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []uintptr{fd, fd, fd},
		// Ctty is a descriptor of the child: its stdin, the peer.
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
	})
	if err != nil {
		ptmx.Close()
		return nil, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return &child{ptmx: ptmx, pollErr: pollErr, pid: pid}, nil
}

// dedupEnv returns env as os/exec passes it to a child: each variable
// once, its last entry in its place (a C program's getenv reads the first
// entry), entries that are not KEY=VALUE kept, empty ones dropped, and an
// error for a NUL byte in any.
func dedupEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for n := len(env) - 1; n >= 0; n-- {
		kv := env[n]
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, errors.New("environment variable contains NUL")
		}
		i := strings.IndexByte(kv, '=')
		if i == 0 { // a key that starts with "=": up to the next one
			i = strings.IndexByte(kv[1:], '=') + 1
		}
		if i < 0 {
			if kv != "" {
				out = append(out, kv)
			}
			continue
		}
		if k := kv[:i]; saw[k] {
			continue
		} else {
			saw[k] = true
		}
		out = append(out, kv)
	}
	slices.Reverse(out)
	return out, nil
}
