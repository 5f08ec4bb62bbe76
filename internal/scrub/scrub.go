// Package scrub takes a secret out of what other processes can read of
// this one: the environment it was started with and its command line.
//
// os.Unsetenv only changes the Go program's copy: /proc/PID/environ shows
// the block the kernel set up at exec, which is left as it was, and
// /proc/PID/cmdline, readable by every user, shows the arguments. Env and
// Arg overwrite the secret in those blocks (through /proc/self/mem; Linux
// only, elsewhere they do nothing).
package scrub

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrUnsupported is returned where there is no /proc/self/mem to write.
var ErrUnsupported = errors.New("scrub: not supported on this system")

// Env unsets key and overwrites its value with zero bytes in the
// environment block this process was started with. It returns the value
// it held ("" and false if key was not set).
func Env(key string) (string, bool, error) {
	v, ok := os.LookupEnv(key)
	if !ok {
		return "", false, nil
	}
	v = strings.Clone(v)
	if err := os.Unsetenv(key); err != nil {
		return v, true, err
	}
	err := overwrite(envBlock, func(block []byte) []int {
		var at []int
		for off := 0; off < len(block); {
			end := bytes.IndexByte(block[off:], 0)
			if end < 0 {
				end = len(block) - off
			}
			if bytes.HasPrefix(block[off:off+end], []byte(key+"=")) {
				for i := off + len(key) + 1; i < off+end; i++ {
					at = append(at, i)
				}
			}
			off += end + 1
		}
		return at
	})
	return v, true, err
}

// Arg overwrites secret with 'x's where it is a whole argument of this
// process ("-token", "SECRET") or the value of one ("-token=SECRET"),
// leaving every other argument as it was. The strings of os.Args share
// that memory, and so do the values a flag package kept from them: clone
// (strings.Clone) what you keep before calling Arg.
func Arg(secret string) error {
	if secret == "" {
		return nil
	}
	return overwrite(argBlock, func(block []byte) []int {
		var at []int
		for off := 0; off < len(block); {
			end := bytes.IndexByte(block[off:], 0)
			if end < 0 {
				end = len(block) - off
			}
			arg := block[off : off+end]
			if i := bytes.IndexByte(arg, '='); bytes.Equal(arg, []byte(secret)) || i >= 0 && bytes.Equal(arg[i+1:], []byte(secret)) {
				for j := off + end - len(secret); j < off+end; j++ {
					at = append(at, j)
				}
			}
			off += end + 1
		}
		return at
	})
}

type block int

const (
	argBlock block = iota
	envBlock
)

// bounds reads where a block lies from /proc/self/stat (fields 48 to 51:
// arg_start, arg_end, env_start, env_end).
func bounds(b block) (start, end uint64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("scrub: /proc/self/stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): field n is f[n-3].
	first := 48 - 3 + 2*int(b)
	if len(f) <= first+1 {
		return 0, 0, errors.New("scrub: /proc/self/stat: too few fields")
	}
	if start, err = strconv.ParseUint(f[first], 10, 64); err == nil {
		end, err = strconv.ParseUint(f[first+1], 10, 64)
	}
	if err != nil || end < start || end-start > 1<<24 {
		return 0, 0, fmt.Errorf("scrub: /proc/self/stat: bad bounds %s %s", f[first], f[first+1])
	}
	return start, end, nil
}

// overwrite reads block b, asks find for the offsets to clear, and writes
// the block back with those bytes replaced (0 in the environment, 'x' in
// the arguments).
func overwrite(b block, find func([]byte) []int) error {
	start, end, err := bounds(b)
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer mem.Close()
	buf := make([]byte, end-start)
	if _, err := mem.ReadAt(buf, int64(start)); err != nil {
		return fmt.Errorf("scrub: reading the block: %w", err)
	}
	at := find(buf)
	if len(at) == 0 {
		return nil
	}
	fill := byte(0)
	if b == argBlock {
		fill = 'x'
	}
	for _, i := range at {
		buf[i] = fill
	}
	if _, err := mem.WriteAt(buf, int64(start)); err != nil {
		return fmt.Errorf("scrub: writing the block: %w", err)
	}
	return nil
}
