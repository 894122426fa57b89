//go:build !linux

package main

import "syscall"

// sysProcAttr is nil outside Linux: the tool reads /proc, so it measures on Linux only.
func sysProcAttr() *syscall.SysProcAttr { return nil }
