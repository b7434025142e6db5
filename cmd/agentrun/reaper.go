package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent/tools"
)

// reaperArg, as the first argument (the second is the run's tag), makes agentrun the
// process reaper of the agentrun that started it. It is not a subcommand: nobody types
// it.
const reaperArg = "__reap-process-groups"

// tagVar is the variable, set in every tool and check process, that marks the processes
// of one agentrun; they pass it on to what they start.
const tagVar = "AGENTRUN_PROCESS_TAG"

// reaper keeps a helper process informed of the process groups that this agentrun's
// tools and checks run in. Agentrun kills each group when its command ends, but a
// killed agentrun (SIGKILL, the OOM killer) can kill nothing: its shells die with it
// (Pdeathsig), while what they started would run on. The helper outlives it, sees its
// input end, and kills every group still listed, then every process still carrying the
// run's tag: those that left their group (setsid) and those whose group agentrun had
// no time to list. It implements tools.Groups.
type reaper struct {
	cmd *exec.Cmd
	log *zap.Logger
	tag string

	mu     sync.Mutex
	in     io.WriteCloser
	broken bool
}

// startReaper starts the helper from the agentrun executable self. It returns nil
// when there is no executable to start (agentrun running inside a test) or the helper
// cannot start; tools then run as before, without the safety net.
func startReaper(self string, log *zap.Logger) *reaper {
	if self == "" {
		return nil
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	tag := hex.EncodeToString(b[:])
	cmd := exec.Command(self, reaperArg, tag)
	cmd.Env = []string{} // it needs nothing, and must not carry the tag it looks for
	// Its own process group: a Ctrl-C meant for agentrun must not end it first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		log.Warn("process reaper not started: tools may outlive a killed agentrun", zap.Error(err))
		return nil
	}
	return &reaper{cmd: cmd, log: log, tag: tag, in: in}
}

// Started lists a group.
func (r *reaper) Started(pgid int) { r.send('+', pgid) }

// Ended unlists a group, which agentrun has killed.
func (r *reaper) Ended(pgid int) { r.send('-', pgid) }

func (r *reaper) send(op byte, pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken {
		return
	}
	line := strconv.AppendInt([]byte{op}, int64(pgid), 10)
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		r.broken = true
		r.log.Warn("process reaper gone: tools may outlive a killed agentrun", zap.Error(err))
	}
}

// Close ends the helper's input and waits for it: it kills what the run's tools left
// running outside their groups, then exits.
func (r *reaper) Close() error {
	r.mu.Lock()
	err := r.in.Close()
	r.broken = true
	r.mu.Unlock()
	if werr := r.cmd.Wait(); werr != nil {
		return fmt.Errorf("process reaper: %w", werr)
	}
	return err
}

// groups returns r as tools.Groups, nil when there is no reaper (a nil *reaper in the
// interface would not compare equal to nil).
func (r *reaper) groups() tools.Groups {
	if r == nil {
		return nil
	}
	return r
}

// environ returns the environment of tool processes: base with the run's tag.
func (r *reaper) environ(base []string) []string {
	if r == nil {
		return base
	}
	return append(base, tagVar+"="+r.tag)
}

// close closes r if there is one, logging a failure.
func (r *reaper) close() {
	if r == nil {
		return
	}
	if err := r.Close(); err != nil {
		r.log.Warn("close process reaper", zap.Error(err))
	}
}

// readGroups reads "+PGID" and "-PGID" lines until in ends and returns the groups still
// listed. Lines it does not understand are skipped, and so are ids that are not
// another process's group (0, 1 and negatives would signal the reaper's own group or
// every process).
func readGroups(in io.Reader) []int {
	listed := map[int]bool{}
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) >= 2 {
			if pgid, perr := strconv.Atoi(string(line[1:])); perr == nil && pgid > 1 {
				switch line[0] {
				case '+':
					listed[pgid] = true
				case '-':
					delete(listed, pgid)
				}
			}
		}
		if err != nil {
			break // the end of the input: agentrun exited or was killed
		}
	}
	return slices.Sorted(maps.Keys(listed))
}

// reapPasses bounds the sweeps for tagged processes: a sweep kills what the previous
// one missed because it was being forked.
const reapPasses = 5

// reap is the helper's work once agentrun is gone: SIGKILL to each group, then to each
// process carrying tag, sweeping until none is left. It returns how many kills failed
// for another reason than the target being gone.
func reap(groups []int, procDir, tag string) int {
	failed := 0
	count := func(err error) {
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			failed++
		}
	}
	for _, pgid := range groups {
		count(syscall.Kill(-pgid, syscall.SIGKILL))
	}
	for range reapPasses {
		pids := taggedProcesses(procDir, tag)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			count(syscall.Kill(pid, syscall.SIGKILL))
		}
	}
	return failed
}

// taggedProcesses lists the live processes under procDir (/proc) whose environment
// holds tagVar=tag, leaving out this process and pid 1. Processes it may not read are
// skipped.
func taggedProcesses(procDir, tag string) []int {
	if tag == "" {
		return nil
	}
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	want := []byte(tagVar + "=" + tag)
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(procDir, e.Name(), "environ"))
		if err != nil {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
