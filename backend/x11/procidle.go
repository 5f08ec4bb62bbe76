package x11

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Idle processes: knowing that a browser's page has handled the input.
//
// A browser answers _NET_WM_PING from its UI process; the page is handled
// by a renderer (Chromium) or content process (Firefox), which gets the
// input over a socket from the UI process and reports its tree and its
// frames back the same way. On a loaded machine that hop can take longer
// than any quiet window, with nothing on the screen or in the tree to say
// it is coming. What does say it is the scheduler: a message written to a
// socket wakes the thread that reads it, which runs until it has handled
// it and woken the next thread with what it queued; and a page with a
// frame to paint wakes at the next vsync tick. So when no thread on that
// path is runnable and none has run for a frame's time (frameSpan), the
// input has been handled, painted and reported. The settle looks for such
// a span among the threads of the window's _NET_WM_PID (when the window
// belongs to this machine) and of its descendants, read from /proc
// (stat for the state, schedstat for the runs): their main threads and the
// threads that carry messages and frames between them (see inputThreads).
// Other threads (disk, network, timers of their own) are left out: they
// are busy for reasons of their own, and would hold every action.
//
// It costs about a millisecond per settle to list the threads (Chromium's
// nine processes), and a read of two small /proc files per thread listed
// per look.

// procTree returns pid and its descendants, from the children lists of
// /proc (the nil slice when pid is not a process of this machine's /proc).
func procTree(pid int) []int {
	if pid <= 0 {
		return nil
	}
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < maxSources; i++ {
		dir := "/proc/" + strconv.Itoa(out[i]) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			if i == 0 {
				return nil
			}
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(dir + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// inputPath returns the /proc folders of the threads of pids that carry
// the input to a page and its frames and tree back: the main thread of
// each process (the UI process's too: a pong comes once its toolkit has
// read the input, which it then hands to the page) and those named in
// inputThreads.
func inputPath(pids []int) []string {
	var out []string
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			task := dir + t.Name() + "/"
			if t.Name() == strconv.Itoa(pid) {
				out = append(out, task)
				continue
			}
			if b, err := os.ReadFile(task + "stat"); err == nil && onInputPath(b) {
				out = append(out, task)
			}
		}
	}
	return out
}

// A threadsSample is what the threads of an input path had done at one
// moment: each one's schedstat (time run, time waited to run, times
// run), which changes whenever it runs.
type threadsSample []string

// sampleThreads reads the schedstat of each thread, and reports whether
// one of them is runnable or in an uninterruptible wait right now (which
// its schedstat does not show until it runs). Threads gone read empty.
func sampleThreads(tasks []string) (s threadsSample, busy bool) {
	s = make(threadsSample, len(tasks))
	for i, task := range tasks {
		if b, err := os.ReadFile(task + "stat"); err == nil && busyState(b) {
			busy = true
		}
		if b, err := os.ReadFile(task + "schedstat"); err == nil {
			s[i] = string(b)
		}
	}
	return s, busy
}

// inputThreads are the names (as /proc truncates them to 15 bytes) of
// the threads that carry input, frames and trees between a browser's
// processes and to the screen, besides their main threads: Chromium's IO
// and compositor threads, Firefox's IPC, compositor and WebRender threads.
var inputThreads = []string{
	"Chrome_IOThread", "Chrome_ChildIOT", "Compositor", "VizCompositorTh",
	"IPC I/O Parent", "IPC I/O Child", "WRSceneBuilder#", "WRRenderBackend", "Renderer", "SwComposite",
}

// onInputPath reports whether a /proc stat line is one of inputThreads'.
func onInputPath(stat []byte) bool {
	i := bytes.IndexByte(stat, '(')
	j := bytes.LastIndexByte(stat, ')')
	if i < 0 || j < i {
		return false
	}
	return slices.Contains(inputThreads, string(stat[i+1:j]))
}

// busyState reports whether a /proc stat line says its thread is running
// or runnable (R) or in an uninterruptible wait (D). The state follows the
// command name, which is in parentheses and may hold any byte.
func busyState(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	s := stat[i+2]
	return s == 'R' || s == 'D'
}
