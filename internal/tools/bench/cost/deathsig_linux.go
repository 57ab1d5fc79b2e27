package main

import "syscall"

// dieWithParent has the child killed when the process that started it
// ends, whatever signals the child ignores (a spinner under nohup).
func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Pdeathsig = syscall.SIGKILL
	return a
}
