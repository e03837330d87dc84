package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
)

// No orphans: a SIGKILLed `rpcbed matrix` left its go-server and its
// client worker running, with parent 1. Now everything a runner starts dies with
// the process that started it (the driver), three ways:
//
//   - every local child gets SIGKILL when the driver dies (Linux's parent-death
//     signal), started from one goroutine locked to its thread: the signal fires
//     when the thread that forked the child exits, and Go retires threads;
//   - a watcher process, started with the first child, learns each local child's
//     process group and each Docker engine used; when the driver dies its pipe
//     closes, and it kills the groups (a PHP client's forked workers too), every
//     process carrying the driver's mark (EnvDriver) and the driver's containers;
//   - what a driver killed before any of that left behind is reaped by the next
//     `rpcbed matrix` (Reap): processes and containers whose driver is gone, by pid
//     and start time, so a live driver's (another run, another test) are never
//     touched.
const (
	// EnvDriver marks every local child with its driver: "PID:START" (START from
	// /proc/PID/stat, in clock ticks since boot, so a reused pid does not match).
	EnvDriver = "RPCBED_DRIVER"
	// EnvScope, when set in the driver's environment, is copied to its children and
	// containers, and Reap then touches only what carries the same scope: tests
	// sharing a machine with other runs reap only their own.
	EnvScope = "RPCBED_SCOPE"
	// envWatcher makes a runner's binary the watcher (see init).
	envWatcher = "RPCBED_RUNNER_WATCHER"
	// LabelDriver and LabelScope are EnvDriver and EnvScope on containers.
	LabelDriver = "org.rpcbed.driver"
	LabelScope  = "org.rpcbed.scope"
)

func init() {
	if id := os.Getenv(envWatcher); id != "" {
		os.Exit(watch(id, os.Stdin))
	}
}

// procStart is field 22 of /proc/PID/stat: the process's start time.
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("bad /proc stat line")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, errors.New("short /proc stat line")
	}
	return strconv.ParseUint(f[19], 10, 64) // f[0] is field 3
}

var selfID = sync.OnceValue(func() string {
	st, _ := procStart(os.Getpid())
	return fmt.Sprintf("%d:%d", os.Getpid(), st)
})

// DriverID is this process's mark: "PID:START".
func DriverID() string { return selfID() }

func scope() string { return os.Getenv(EnvScope) }

// driverAlive reports whether the driver id names a running process: its pid is
// there with the same start time. An id of the old form (a pid alone) is alive
// while the pid is.
func driverAlive(id string) bool {
	p, st, hasStart := strings.Cut(id, ":")
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return false
	}
	if !hasStart {
		return alive(pid)
	}
	got, err := procStart(pid)
	return err == nil && strconv.FormatUint(got, 10) == st
}

// childEnv is what every local child and container carries.
func childEnv() []string {
	env := []string{EnvDriver + "=" + DriverID()}
	if s := scope(); s != "" {
		env = append(env, EnvScope+"="+s)
	}
	return env
}

// driverLabels is what every container carries besides its runner and name.
func driverLabels() map[string]string {
	l := map[string]string{LabelPID: strconv.Itoa(os.Getpid()), LabelDriver: DriverID()}
	if s := scope(); s != "" {
		l[LabelScope] = s
	}
	return l
}

// starter starts local children from one goroutine locked to its OS thread, so
// their parent-death signal fires when the driver dies, not when a thread does.
var starter = sync.OnceValue(func() chan startReq {
	ch := make(chan startReq)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range ch {
			r.done <- r.cmd.Start()
		}
	}()
	return ch
})

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startChild starts cmd so that it dies with this process: SIGKILL on the
// driver's death, its process group told to the watcher.
func startChild(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.Env = append(cmd.Env, childEnv()...)
	done := make(chan error, 1)
	starter() <- startReq{cmd, done}
	if err := <-done; err != nil {
		return err
	}
	if cmd.SysProcAttr.Setpgid {
		tell("pgid", strconv.Itoa(cmd.Process.Pid))
	}
	return nil
}

// forgetChild tells the watcher a child's group is gone (its pid may be reused).
func forgetChild(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		tell("forget", strconv.Itoa(cmd.Process.Pid))
	}
}

// The watcher: one per driver, started with its first child or container.
var watcher struct {
	once sync.Once
	mu   sync.Mutex
	w    io.WriteCloser // nil: none could be started; children still die by Pdeathsig
}

func tell(verb, arg string) {
	watcher.once.Do(startWatcher)
	watcher.mu.Lock()
	defer watcher.mu.Unlock()
	if watcher.w != nil {
		fmt.Fprintf(watcher.w, "%s %s\n", verb, arg)
	}
}

func startWatcher() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe)
	env := []string{envWatcher + "=" + DriverID()}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, EnvDriver+"=") && !strings.HasPrefix(e, envWatcher+"=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	// Its own process group: a ^C to the driver's terminal must not end it before
	// it has cleaned up. No parent-death signal: it is what outlives the driver.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Nothing of the driver's but the pipe: a driver whose stderr is a pipe must
	// not see it held open by the watcher.
	cmd.Stdout, cmd.Stderr = nil, nil
	w, err := cmd.StdinPipe()
	if err != nil {
		return
	}
	if err := cmd.Start(); err != nil {
		return
	}
	go cmd.Wait() // reaped if it ever ends before the driver
	watcher.w = w
}

// watch is the watcher's main: it reads what the driver tells it until the
// driver is gone (EOF), then kills and removes what is left of the driver's.
func watch(id string, in io.Reader) int {
	groups := map[int]bool{}
	var engines []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "pgid", "forget":
			if n, err := strconv.Atoi(arg); err == nil && n > 1 {
				groups[n] = verb == "pgid"
			}
		case "docker":
			if !slices.Contains(engines, arg) {
				engines = append(engines, arg)
			}
		}
	}
	for g, live := range groups {
		if live {
			syscall.Kill(-g, syscall.SIGKILL)
		}
	}
	killMarked(func(driver, _ string) bool { return driver == id })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, e := range engines {
		if d, err := NewDockerAt(e); err == nil {
			d.removeWhere(ctx, func(labels map[string]string) bool { return labels[LabelDriver] == id })
		}
	}
	return 0
}

// killMarked SIGKILLs every process (but this one) whose EnvDriver and EnvScope
// match, and returns their pids and drivers.
func killMarked(match func(driver, scope string) bool) (pids []int, drivers []string) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue // gone, or another user's
		}
		var driver, sc string
		for _, kv := range bytes.Split(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte(EnvDriver+"=")); ok {
				driver = string(v)
			} else if v, ok := bytes.CutPrefix(kv, []byte(EnvScope+"=")); ok {
				sc = string(v)
			}
		}
		if driver != "" && match(driver, sc) && syscall.Kill(pid, syscall.SIGKILL) == nil {
			pids = append(pids, pid)
			drivers = append(drivers, driver)
		}
	}
	return pids, drivers
}

// removeWhere kills, then removes, every rpcbed container whose labels match:
// all kills first, at once, so that none runs on while others are removed.
func (d *Docker) removeWhere(ctx context.Context, match func(map[string]string) bool) (removed []dc.APIContainers, err error) {
	cs, err := d.Containers(ctx)
	if err != nil {
		return nil, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range cs {
		if !match(c.Labels) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.pool.Client.KillContainer(dc.KillContainerOptions{ID: c.ID, Signal: dc.SIGKILL, Context: ctx})
			err := d.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: c.ID, Force: true, RemoveVolumes: true, Context: ctx})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			removed = append(removed, c)
		}()
	}
	wg.Wait()
	return removed, errors.Join(errs...)
}

// Reaped is what Reap found of earlier drivers and removed.
type Reaped struct {
	Processes, Containers int
	Drivers               []string // their drivers' ids, sorted
}

func (r Reaped) String() string {
	return fmt.Sprintf("reaped %d processes and %d containers left by earlier runs that were killed (drivers %s)",
		r.Processes, r.Containers, strings.Join(r.Drivers, ", "))
}

// orphaned is the test for what Reap takes: its driver is dead, and it is of
// this process's scope when one is set.
func orphaned(driver, sc string) bool {
	if s := scope(); s != "" && sc != s {
		return false
	}
	return driver != "" && driver != DriverID() && !driverAlive(driver)
}

// Reap kills the local processes and removes the containers (on d, when not
// nil) that earlier drivers, now dead, left behind.
func Reap(ctx context.Context, d *Docker) (Reaped, error) {
	var r Reaped
	pids, drivers := killMarked(orphaned)
	r.Processes = len(pids)
	var err error
	if d != nil {
		var cs []dc.APIContainers
		cs, err = d.removeWhere(ctx, func(l map[string]string) bool {
			driver := l[LabelDriver]
			if driver == "" {
				driver = l[LabelPID] // a container from before the driver label
			}
			return orphaned(driver, l[LabelScope])
		})
		r.Containers = len(cs)
		for _, c := range cs {
			drivers = append(drivers, firstOf(c.Labels[LabelDriver], c.Labels[LabelPID]))
		}
	}
	slices.Sort(drivers)
	r.Drivers = slices.Compact(drivers)
	return r, err
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
