package osexec

// BuffersTaken reports how many chunk buffers p has taken so far.
func BuffersTaken(p *Process) int { return int(p.nbufs.Load()) }

// ReadAhead is the bound on a process's chunk buffers.
const ReadAhead = readAhead

// Running reports how many processes count against MaxProcesses.
func Running(e *Executor) int { return int(e.running.Load()) }
