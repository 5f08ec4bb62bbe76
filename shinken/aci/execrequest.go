package aci

import "time"

// An ExecRequest describes one command to run.
type ExecRequest struct {
	Argv    []string          // program and arguments, looked up on PATH; or
	Shell   string            // a command line for /bin/sh -c; exactly one is set
	Dir     string            // working directory; "" means the runtime's
	Env     map[string]string // merged over the runtime's environment
	Stdin   *string           // written then closed; nil means /dev/null
	Timeout time.Duration     // the process group is killed at this deadline; 0 means the executor's default
}

// Action returns the exec action that asks for r: buffered, or streamed
// when stream is true. A Timeout is sent in whole milliseconds, rounded up,
// so a request never gets less time than it asked for.
func (r *ExecRequest) Action(stream bool) Action {
	a := Action{Verb: VerbExec, Argv: r.Argv, Env: r.Env, Stdin: r.Stdin}
	if r.Shell != "" {
		a.Shell = &r.Shell
	}
	if r.Dir != "" {
		a.Cwd = &r.Dir
	}
	if r.Timeout > 0 {
		ms := int((r.Timeout + time.Millisecond - 1) / time.Millisecond)
		a.TimeoutMS = &ms
	}
	if stream {
		a.Stream = &stream
	}
	return a
}
