//go:build unix

package apy

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the server the leader of a new process group, so that Close can
// stop it together with the pipeline processes it forks.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM (or SIGKILL when kill is set) to the server's process group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig) // ESRCH once everything has exited
}

// groupGone reports whether no process of the server's process group is left (zombies
// waiting for init to reap them count as left).
func groupGone(cmd *exec.Cmd) bool {
	return syscall.Kill(-cmd.Process.Pid, 0) == syscall.ESRCH
}
