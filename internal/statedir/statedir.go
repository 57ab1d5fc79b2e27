// Package statedir finds relay's state folder (RELAY_HOME) and decides
// whether it may be trusted.
//
// The state folder holds the hub's token, its hub.json (the pid that relay
// down signals) and the memory database. Whoever can write there can plant
// a token of their choosing, and so read and write every message of the
// team, or point relay down at another process. So relay uses a folder, and
// reads a secret file, only when it belongs to the user running relay and
// nobody else can write to it; it creates folders 0700 and files 0600. A
// refusal is an *UnsafeError that says what is wrong and the command that
// fixes it.
package statedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrUnsafe is wrapped by every refusal of a folder or file that another
// user owns or that others can write (or, for a secret, read).
var ErrUnsafe = errors.New("not private to you")

// UnsafeError is a refused folder or file: Problem says what is wrong with
// Path, Fix is the command (or step) that makes it right.
type UnsafeError struct {
	Path    string
	Problem string
	Fix     string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s %s; fix: %s", e.Path, e.Problem, e.Fix)
}

// Is makes every *UnsafeError match ErrUnsafe.
func (e *UnsafeError) Is(target error) bool { return target == ErrUnsafe }

// Lookup returns the state folder, without creating or checking it:
// RELAY_HOME (made absolute), else $XDG_STATE_HOME/relay, else
// $HOME/.local/state/relay. getenv nil means os.Getenv. It is the one place
// that decides where the folder is.
func Lookup(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("RELAY_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "relay"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("find state folder: set RELAY_HOME: %w", err)
		}
	}
	return filepath.Join(home, ".local", "state", "relay"), nil
}

// Ensure creates dir (and missing parents) with mode 0700 and checks it
// with CheckDir.
func Ensure(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state folder %s: %w", dir, err)
	}
	return CheckDir(dir)
}

// CheckDir returns nil when dir is missing or is a folder of the current
// user that no one else can write; else an *UnsafeError (or the error of
// reading it).
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check state folder: %w", err)
	}
	if !fi.IsDir() {
		return &UnsafeError{Path: dir, Problem: "is not a folder", Fix: "rm " + dir + ", or point RELAY_HOME at a folder"}
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return &UnsafeError{Path: dir,
			Problem: fmt.Sprintf("belongs to %s, not to you (%s): whoever owns it can plant the hub's token", who(uid), who(os.Geteuid())),
			Fix:     fmt.Sprintf("point RELAY_HOME at a folder of yours (mkdir -m 700 NEWDIR), or take this one over with: chown -R %d %s && chmod 700 %s", os.Geteuid(), dir, dir)}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return &UnsafeError{Path: dir,
			Problem: fmt.Sprintf("can be written by others (mode %04o): they could plant the hub's token", perm),
			Fix:     "chmod 700 " + dir}
	}
	return nil
}

// EnsureSub creates the folder home/elems... (each missing level 0700)
// and returns its path, after checking home as CheckDir does and every
// level below it as CheckSub does: the agents', run, hub and logs folders
// hold credentials, sockets and tokens, so a level that is a symbolic link
// (it would send what relay writes into someone else's folder), that
// another user owns or that others can write is refused (*UnsafeError).
// Each elem is one path component.
func EnsureSub(home string, elems ...string) (string, error) {
	if err := Ensure(home); err != nil {
		return "", err
	}
	dir := home
	for _, e := range elems {
		dir = filepath.Join(dir, e)
		// Mkdir does not follow a symbolic link in the last component: a
		// planted one makes it fail with ErrExist, and CheckSub refuses it.
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create state folder %s: %w", dir, err)
		}
		if err := CheckSub(dir); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// CheckSub returns nil when dir, a folder inside the state folder, is
// missing or is a real folder (not a symbolic link) of the current user
// that no one else can write; else an *UnsafeError.
func CheckSub(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check state folder: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, _ := os.Readlink(dir)
		return &UnsafeError{Path: dir,
			Problem: fmt.Sprintf("is a symbolic link (to %s): relay keeps credentials and sockets only in real folders of its state folder", target),
			Fix:     "rm " + dir + " (relay creates the folder again)"}
	}
	return CheckDir(dir)
}

// CheckSecret returns nil when path is a regular file of the current user
// that no one else can read or write (a token); else an *UnsafeError whose
// fix is to remove it, since others may know or have chosen its content.
// A missing file is os.ErrNotExist, wrapped.
func CheckSecret(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	return checkSecretInfo(path, fi)
}

// CheckSecretFile is CheckSecret for a file already open, so that what is
// checked is what is read.
func CheckSecretFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check %s: %w", f.Name(), err)
	}
	return checkSecretInfo(f.Name(), fi)
}

func checkSecretInfo(path string, fi os.FileInfo) error {
	fix := "rm " + path + " (relay up writes a new one)"
	if !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, Problem: "is not a regular file", Fix: fix}
	}
	if uid, ok := owner(fi); ok && uid != os.Geteuid() {
		return &UnsafeError{Path: path, Problem: fmt.Sprintf("belongs to %s, not to you (%s): relay did not write it", who(uid), who(os.Geteuid())), Fix: fix}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &UnsafeError{Path: path, Problem: fmt.Sprintf("can be read or written by others (mode %04o): relay writes it 0600", perm), Fix: fix}
	}
	return nil
}

// ReadSecret reads path after checking it as CheckSecret does, on the
// same open file.
func ReadSecret(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := CheckSecretFile(f); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// owner returns the uid that owns fi, when the system says.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// who names a uid: "nobody (uid 65534)", or "uid 1234" when unknown.
func who(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return fmt.Sprintf("%s (uid %s)", u.Username, id)
	}
	return "uid " + id
}
