//go:build !unix

package apy

import "os/exec"

// setProcessGroup does nothing where there are no Unix process groups.
func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the server process; its pipeline processes end when their input closes.
func signalGroup(cmd *exec.Cmd, _ bool) {
	_ = cmd.Process.Kill()
}

// groupGone reports true: there is no group to wait for.
func groupGone(*exec.Cmd) bool { return true }
