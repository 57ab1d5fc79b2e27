package gemini

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrSkipped means Gemini CLI would skip a system settings file (its
// system defaults, where relay's overlay goes) as insecure.
var ErrSkipped = errors.New("skipped by Gemini CLI as insecure")

// SystemFileRead checks a system settings file the way Gemini CLI 0.61.0
// does before it reads one (GEMINI_CLI_SYSTEM_DEFAULTS_PATH,
// GEMINI_CLI_SYSTEM_SETTINGS_PATH): the file and every folder above it,
// as named and as resolved, must be owned by root (uid 0) and not writable
// by their group or others, and a symbolic link on the way must be root's.
// So Gemini CLI reads relay's overlay only when relay runs as root with
// its state folder outside /tmp; otherwise it skips it with a warning,
// and relay's hooks and MCP server are not there. It returns nil when the
// file would be read, else an error wrapping ErrSkipped that says why.
func SystemFileRead(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	paths := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if err := secure(p, false); err != nil {
			return err
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if err := secure(dir, true); err != nil {
				return err
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	return nil
}

// secure checks one path as Gemini CLI does (a missing one passes).
func secure(path string, dir bool) error {
	if li, err := os.Lstat(path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if uid, ok := ownerOf(li); ok && uid != 0 {
			return fmt.Errorf("%w: the link %s is not owned by root", ErrSkipped, path)
		}
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSkipped, err)
	}
	if fi.IsDir() != dir {
		return fmt.Errorf("%w: %s is not a %s", ErrSkipped, path, map[bool]string{true: "folder", false: "file"}[dir])
	}
	if uid, ok := ownerOf(fi); ok && uid != 0 {
		return fmt.Errorf("%w: %s is not owned by root (uid %d)", ErrSkipped, path, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by its group or others (mode %o)", ErrSkipped, path, fi.Mode().Perm())
	}
	return nil
}

// ownerOf returns the uid that owns fi, when the system says.
func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// OverlayRead says whether Gemini CLI will read the settings overlay relay
// wrap writes for a session below home (relay's state folder, in its run
// folder): relay writes it as the user it runs as, so a user other than
// root always fails the check (see SystemFileRead), and root passes when
// no folder on the way is someone else's or writable by others. It
// returns nil when the overlay would be read, else an error wrapping
// ErrSkipped that says why.
func OverlayRead(home string) error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("%w: relay runs as uid %d, not root, so the file it writes is not root's", ErrSkipped, uid)
	}
	return SystemFileRead(filepath.Join(home, "run", "gemini-defaults.json"))
}
