package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (sysconf(_SC_CLK_TCK)): 100 on
// every Linux architecture Go supports.
const userHZ = 100

// processCPU returns the CPU time (user and system, all threads) process pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := statTicks(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// statTicks returns utime+stime (fields 14 and 15) of a /proc/PID/stat line. The command
// name (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func statTicks(stat string) (uint64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("no ')' closing the command name")
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3 (state)
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("%d fields after the command name, want at least %d", len(f), stime+1)
	}
	u, err := strconv.ParseUint(f[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	s, err := strconv.ParseUint(f[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return u + s, nil
}
