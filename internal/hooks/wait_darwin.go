package hooks

import (
	"time"

	"golang.org/x/sys/unix"
)

// waitExitNoReap returns once the child pid has exited, leaving it a zombie
// so that its pid, the id of its process group, is not reused before finish
// has killed the rest of the group and reaped it. macOS has no waitid with
// WNOWAIT in x/sys/unix; a kqueue EVFILT_PROC/NOTE_EXIT event reports the
// exit without reaping. A child that cannot be watched because it has
// already exited (ESRCH) is a zombie of ours already: that is the exit.
func waitExitNoReap(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		pollZombie(pid)
		return
	}
	defer unix.Close(kq)
	reg := []unix.Kevent_t{{
		Ident:  uint64(pid),
		Filter: unix.EVFILT_PROC,
		Flags:  unix.EV_ADD | unix.EV_ONESHOT,
		Fflags: unix.NOTE_EXIT,
	}}
	// Register alone first (no events asked for, so it does not wait): an
	// EINTR while waiting below then never leaves it unclear whether the
	// registration happened.
	for {
		_, err := unix.Kevent(kq, reg, nil, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ESRCH {
			return
		}
		if err != nil {
			pollZombie(pid)
			return
		}
		break
	}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, nil, out, nil)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			pollZombie(pid)
		}
		return
	}
}

// sZomb is XNU's p_stat of a process that has exited and not been reaped.
const sZomb = 5

// pollZombie is the fallback when kqueue fails: it polls the process's
// state until it is a zombie (or gone).
func pollZombie(pid int) {
	for {
		kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
		if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == sZomb {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
