package hooks

import "golang.org/x/sys/unix"

// waitExitNoReap returns once the child pid has exited, leaving it a zombie
// (waitid with WNOWAIT) so that its pid, the id of its process group, is not
// reused before finish has killed the rest of the group and reaped it.
func waitExitNoReap(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
