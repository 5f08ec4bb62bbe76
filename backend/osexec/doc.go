// Package osexec runs commands for an agent: it is the operating-system
// implementation of [shinken.Executor], shared by every backend.
//
// Each command runs in its own process group with a parent-death signal:
//
//   - A command is either an argv, looked up on the PATH of its merged
//     environment and never given to a shell, or a shell line for /bin/sh -c.
//   - At its deadline, when its context is done, or on [Process.Kill], the
//     whole group gets SIGKILL. A deadline kill is reported as such
//     (TimedOut, Signal 9), never disguised as an exit code.
//   - Nothing a command starts outlives it: each command runs below an init
//     of a pid namespace of its own, which the kernel empties when the init
//     ends, so a job that calls setsid or forks twice dies with the command
//     too. The init ends when the command exits, when the group is killed,
//     and when the program that started it dies, even by SIGKILL (its
//     parent-death signal). Where the kernel makes no pid namespace
//     ([Executor.Contained] is false), the command leads a process group,
//     killed as soon as its leader exits; [Options.KeepBackground] leaves
//     background jobs running instead, and gives up the namespace.
//   - The wait for processes that hold the output pipes after the leader
//     exits, a background job or a process that left the group, is bounded
//     by [Options.WaitDelay].
//
// Output is streamed with backpressure: [Process.Next] hands out chunks in
// the order they were read from stdout and stderr, and while the caller does
// not ask for the next one, the pipes fill and the child pauses. A process
// holds a few chunk buffers at most, however much it writes.
//
// [Collect] is the buffered form on top of the stream: it keeps each channel
// up to a budget, drains and discards the rest while the child runs to
// completion, and says honestly what it cut. [Text] turns the kept bytes
// into UTF-8 with lossy replacement.
//
// Every process must be waited for, by [Process.Wait] or [Collect]: Wait
// reaps the child and releases the goroutines and buffers that serve it.
// The child itself is reaped as soon as it ends even without Wait, so a
// caller that forgets leaves no zombie, but the goroutines that hold its
// unread output stay until Wait.
package osexec
