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
//   - Nothing a command starts outlives it: it runs below the init of a pid
//     namespace of its own, which the kernel empties when the init ends, so
//     a job that calls setsid or forks twice dies too. The init ends when
//     the command exits, when the group is killed, and when the program that
//     started it dies, even by SIGKILL. Without a pid namespace (the kernel
//     made none, or [Options.KeepBackground]: [Executor.Contained] is false),
//     only the process group is killed: a job that left it survives.
//   - The wait for processes holding the output pipes after the leader exits
//     is bounded by [Options.WaitDelay].
//
// Output is streamed with backpressure: [Process.Next] hands out chunks in
// the order they were read from stdout and stderr, and while the caller does
// not ask for the next one, the pipes fill and the child pauses. A process
// holds a few chunk buffers at most, however much it writes.
// [shinken.Collect] is the buffered form on top of the stream: it keeps each
// channel up to a budget and drains the rest, saying what it cut.
//
// Every process must be waited for, by [Process.Wait] or shinken.Collect:
// Wait releases the goroutines and buffers that serve it. A child is reaped
// as soon as it ends even without Wait, so it leaves no zombie.
package osexec
