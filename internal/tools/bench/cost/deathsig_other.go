//go:build !linux

package main

import "syscall"

// dieWithParent is Linux's Pdeathsig; elsewhere the child outlives a bench
// that is killed (the bench is measured on Linux).
func dieWithParent(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
