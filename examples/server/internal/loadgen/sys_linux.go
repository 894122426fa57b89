package main

import "syscall"

// sysProcAttr kills a started target when the load tool dies, so that none outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
