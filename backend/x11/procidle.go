package x11

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"shinken.dev/go/internal/procfs"
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
// it and woken the next thread with what it queued. So when no thread on
// that path is runnable and none has run for a short span (frameSpan),
// the input has been handed along the whole path and handled (a frame
// waiting for the next vsync tick is left to the quiet window and the
// paint rule). The settle looks for such
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

// An inputPath is the threads of a browser that carry the input to a page
// and its frames and tree back: the main thread of each process (the UI
// process's too: a pong comes once its toolkit has read the input, which
// it then hands to the page) and those named in inputThreads, as /proc
// folders. Those of the UI process's main and IO threads are only looked
// at for work to do now: they keep busy with the tree's events and the
// bus after the page is done; the others must also have rested for a
// frame's time.
type inputPath struct {
	tasks []string
	rest  []bool
}

// uiThreads are the IO threads of a browser's UI process, by name.
var uiThreads = []string{"Chrome_IOThread", "IPC I/O Parent"}

// add adds to p the input path of the browser whose UI process is root.
func (p *inputPath) add(root int) {
	for i, pid := range procfs.Tree(root, maxSources) {
		if helperProcess(pid) {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			task := dir + t.Name() + "/"
			if t.Name() == strconv.Itoa(pid) {
				p.tasks, p.rest = append(p.tasks, task), append(p.rest, i > 0)
				continue
			}
			b, err := os.ReadFile(task + "stat")
			if err != nil {
				continue
			}
			st, err := procfs.ParseStat(b)
			if err != nil || !slices.Contains(inputThreads, st.Comm) {
				continue
			}
			p.tasks, p.rest = append(p.tasks, task), append(p.rest, i > 0 || !slices.Contains(uiThreads, st.Comm))
		}
	}
}

// helperProcess reports whether pid is one of a browser's processes that
// neither handle a page nor put its frames on the screen, whose threads
// wake for reasons of their own: Chromium's utility (network, storage,
// audio), zygote and broker processes, Firefox's media, socket, utility,
// fork-server and plugin processes (the last word of their command line)
// and its extensions' process.
func helperProcess(pid int) bool {
	args, err := procfs.Cmdline(pid)
	if err != nil || len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch a {
		case "--type=utility", "--type=zygote", "--type=broker":
			return true
		}
	}
	switch args[len(args)-1] {
	case "rdd", "socket", "utility", "forkserver", "gmplugin":
		return len(args) > 1
	}
	// Firefox runs its extensions in a content process of their own.
	name, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return err == nil && strings.TrimSpace(string(name)) == "WebExtensions"
}

// A threadsSample is what the threads of an input path that must rest
// had done at one moment: each one's schedstat (time run, time waited to
// run, times run), which changes whenever it runs.
type threadsSample []string

// sample reads the schedstat of each thread that must rest, and reports
// whether one of the path's threads is runnable or in an uninterruptible
// wait right now (which its schedstat does not show until it runs).
// Threads gone read empty.
func (p inputPath) sample() (s threadsSample, busy bool) {
	s = make(threadsSample, len(p.tasks))
	for i, task := range p.tasks {
		if b, err := os.ReadFile(task + "stat"); err == nil {
			if st, err := procfs.ParseStat(b); err == nil && st.Busy() {
				busy = true
			}
		}
		if !p.rest[i] {
			continue
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
