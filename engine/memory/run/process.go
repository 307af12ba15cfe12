package run

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Owner is the process that runs a run, recorded so that a reader can
// tell a run whose process is gone (killed, crashed, the machine
// rebooted) from one that is still going.
type Owner struct {
	PID  int    `json:"pid"`
	Host string `json:"host"` // os.Hostname of the process
	// Start tells this process from a later one that reuses its pid:
	// "<boot id>:<start time in clock ticks since boot>" from /proc on
	// Linux; empty where that is not known.
	Start string `json:"start,omitempty"`
}

// Self returns the identity of the calling process.
func Self() Owner {
	h, _ := os.Hostname()
	o := Owner{PID: os.Getpid(), Host: h}
	if st, ok := procStart(o.PID); ok {
		if boot := bootID(); boot != "" {
			o.Start = boot + ":" + st
		}
	}
	return o
}

// ProcessAlive reports whether the process o is still running. It answers
// true when it cannot tell: a process on another host, or no pid. On the
// same host a pid that no longer exists, a zombie, or a pid now held by a
// process that started at another time (or in another boot) is gone.
func ProcessAlive(o Owner) bool {
	if o.PID <= 0 {
		return true
	}
	if h, _ := os.Hostname(); o.Host == "" || o.Host != h {
		return true
	}
	if o.Start != "" {
		boot, st, _ := strings.Cut(o.Start, ":")
		if now := bootID(); now != "" && now != boot {
			return false // the machine rebooted since
		}
		cur, ok, gone := procStat(o.PID)
		switch {
		case gone:
			return false
		case ok:
			return cur != "" && cur == st
		}
	}
	if _, ok, gone := procStat(o.PID); gone {
		return false
	} else if ok {
		return true
	}
	return signalAlive(o.PID)
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func procStart(pid int) (string, bool) {
	st, ok, _ := procStat(pid)
	return st, ok && st != ""
}

// procStat reads /proc/<pid>/stat: the process's start time (field 22),
// ok when /proc answered, gone when the process does not exist or is a
// zombie. The start time is "" for a zombie.
func procStat(pid int) (start string, ok, gone bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return "", true, true // /proc works, the pid is not there
		}
		return "", false, false
	}
	if err != nil {
		return "", false, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return "", false, false
	}
	if f[0] == "Z" || f[0] == "X" {
		return "", true, true
	}
	return f[19], true, false
}
