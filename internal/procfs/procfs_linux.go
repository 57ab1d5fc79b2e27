package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// OpenFiles returns the paths of the regular files that the process pid and
// its descendants hold open (sockets, pipes and devices left out), from
// /proc/PID/fd. Processes that end meanwhile, or whose descriptors may not
// be read, are skipped.
func OpenFiles(pid int) ([]string, error) {
	return openFiles("/proc", pid)
}

func openFiles(proc string, pid int) ([]string, error) {
	if _, err := os.Stat(filepath.Join(proc, "self")); err != nil {
		return nil, ErrUnsupported
	}
	pids, err := descendants(proc, pid)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range pids {
		dir := filepath.Join(proc, strconv.Itoa(p), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			target, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil || !strings.HasPrefix(target, "/") {
				continue // socket:[…], pipe:[…], anon_inode:…
			}
			if strings.HasPrefix(target, "/dev/") {
				continue
			}
			files = append(files, target)
		}
	}
	return files, nil
}

// descendants returns pid and every process below it.
func descendants(proc string, pid int) ([]int, error) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parent(proc, p); ok {
			children[pp] = append(children[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// parent reads the parent pid from /proc/PID/stat ("pid (comm) state ppid
// …"; comm may hold spaces and parentheses, so read after the last ')').
func parent(proc string, pid int) (int, bool) {
	f := statFields(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// Comm returns the name of process pid's program (/proc/PID/comm, at most
// 15 bytes), or an error when it ended or may not be read.
func Comm(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return "", fmt.Errorf("program of process %d: %w", pid, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Group returns the processes of process group pgrp (field 5 of
// /proc/PID/stat), or ErrUnsupported without /proc.
func Group(pgrp int) ([]int, error) {
	return group("/proc", pgrp)
}

func group(proc string, pgrp int) ([]int, error) {
	if _, err := os.Stat(filepath.Join(proc, "self")); err != nil {
		return nil, ErrUnsupported
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(filepath.Join(proc, e.Name(), "stat")); len(f) > 2 && f[2] == strconv.Itoa(pgrp) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Running reports whether a thread of one of the processes pids is
// running or waiting for a processor (state R), or in an uninterruptible
// wait (D): the process is in the middle of something. A process that
// ended, or whose threads may not be read, counts as not running.
func Running(pids []int) (bool, error) {
	return running("/proc", pids)
}

func running(proc string, pids []int) (bool, error) {
	if _, err := os.Stat(filepath.Join(proc, "self")); err != nil {
		return false, ErrUnsupported
	}
	for _, p := range pids {
		dir := filepath.Join(proc, strconv.Itoa(p), "task")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			f := statFields(filepath.Join(dir, e.Name(), "stat"))
			if len(f) > 0 && (f[0] == "R" || f[0] == "D") {
				return true, nil
			}
		}
	}
	return false, nil
}

// statFields returns the fields of a stat file after the command's name
// ("pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses,
// so the fields start after the last ')'): state first. Nil when the file
// cannot be read.
func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}
