package machine

import (
	"context"
	"testing"
	"time"
)

// TestShellRunSeesThePrompt waits with no input on a command that runs,
// while its last output and then its prompt come (as after a kill): the
// answer is always the exit code the prompt carries. Run once read
// whether the command had finished and whether the shell sat at its
// prompt under two locks, and a prompt parsed between the two made the
// answer neither running nor ended with a code.
func TestShellRunSeesThePrompt(t *testing.T) {
	const marker = "\x1b]777;0123456789abcdef0123456789abcdef;"
	for round := range 2000 {
		s := &Shell{marker: []byte(marker), max: 1 << 20, notify: make(chan struct{}), done: make(chan struct{}),
			prompts: 1, reported: 1} // a command typed after the first prompt runs
		fed := make(chan struct{})
		go func() {
			defer close(fed)
			s.gather([]byte("Killed\r\n"))
			s.gather([]byte(marker + "137\a"))
		}()
		// A hang guard only: the prompt is on its way.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		res, err := s.Run(ctx, "", &RunOptions{Wait: time.Minute, Quiet: -1})
		cancel()
		<-fed
		if err != nil || res.ExitCode == nil || *res.ExitCode != 137 || res.Running || res.Output != "Killed\n" {
			t.Fatalf("round %d: %+v %v, want exit code 137 after the output", round, res, err)
		}
	}
}
