package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// sideRoot is where journals' side files live: a tmpfs, which outlives a
// killed process but never waits for a disk.
const sideRoot = "/dev/shm"

// sidePath returns the side file of the journal at path: in a folder of
// the user's own under sideRoot, named after the journal's absolute path.
func sidePath(path string) (dir, file string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("delivery journal %s: %w", path, err)
	}
	sum := sha256.Sum256([]byte(abs))
	dir = filepath.Join(sideRoot, fmt.Sprintf("relay-%d", os.Geteuid()))
	return dir, filepath.Join(dir, hex.EncodeToString(sum[:16])), nil
}

// openSide opens the journal's side file (see Journal): the ids a killed
// process left on it are added to the journal first. Without a tmpfs, or
// when the folder is not the user's alone (another user could plant or
// remove marks), the journal goes without one.
func (j *Journal) openSide() error {
	dir, file, err := sidePath(j.path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(sideRoot); err != nil || !fi.IsDir() {
		return nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return nil
	}
	left, err := readIDs(file)
	if err != nil {
		return err
	}
	var add []string
	for _, id := range left {
		if !j.seen[id] {
			j.seen[id] = true
			add = append(add, id)
		}
	}
	if err := j.flush(add); err != nil {
		return err
	}
	j.n += len(add)
	// Everything it held is in the journal's file now.
	j.side, err = os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		j.side = nil
		return nil
	}
	return nil
}
