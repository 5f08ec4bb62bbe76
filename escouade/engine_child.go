package escouade

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"shinken.dev/go/escouade/internal/contain"
	"shinken.dev/go/escouade/internal/engine"
	"shinken.dev/go/escouade/internal/jsonrpc"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/logtext"
	"shinken.dev/go/internal/strictjson"
)

// Exit statuses of an engine's process, beyond 0 (the plugin ended) and 2
// (the Go runtime's fatal errors: a stack overflow, out of memory).
const (
	exitFailed = 1  // the plugin's code failed: it does not load, a turn was interrupted
	exitTurn   = 3  // a turn did not stop when interrupted: the process ended it
	exitBoot   = 70 // the Host's first line does not hold, or the bounds cannot be set
)

// runEngine is the life of an engine's process; it returns its exit status.
func runEngine(langs []Language) int {
	os.Unsetenv(engineEnv)
	in := bufio.NewReaderSize(os.Stdin, engineBootMax)
	boot, err := readBoot(in)
	if err == nil {
		err = contain.LimitSelf(boot.Memory, boot.CPU)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "escouade engine:", err)
		return exitBoot
	}
	debug.SetMaxStack(engineStack)
	// A fatal error (the plugin's recursion, its allocation) says what it
	// is in a line, without the goroutines' stacks: they are the engine's.
	debug.SetTraceback("none")
	// The collector works harder as the bound nears, rather than let the
	// kernel refuse memory the heap could have given back.
	debug.SetMemoryLimit(boot.Memory / 4 * 3)
	code := make([]byte, boot.Code)
	if _, err := io.ReadFull(in, code); err != nil {
		fmt.Fprintln(os.Stderr, "escouade engine:", "the code:", err)
		return exitBoot
	}

	ctl := &ctlClient{w: os.NewFile(3, "escouade-control-out"), lr: jsonrpc.NewLineReader(os.NewFile(4, "escouade-control-in"), boot.MaxLine), max: boot.MaxLine}
	rep := &ctlReporter{c: ctl}
	// The Host's SIGTERM ends the plugin as the end of its input does.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	exit := func(status int, msg string) {
		rep.fatal(msg)
		os.Exit(status)
	}
	if err := runChild(ctx, langs, boot, code, in, rep, exit); err != nil {
		rep.fatal(err.Error())
		return exitFailed
	}
	return 0
}

// readBoot reads the first line.
func readBoot(in *bufio.Reader) (*engineBoot, error) {
	line, err := in.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("the first line: %w", err)
	}
	var boot engineBoot
	if err := strictjson.Unmarshal(line, &boot); err != nil {
		return nil, fmt.Errorf("the first line: %w", err)
	}
	if boot.Code < 0 || boot.Code > maxWASM || boot.Memory <= 0 || boot.CPU <= 0 {
		return nil, errors.New("the first line: bounds out of range")
	}
	return &boot, nil
}

// runChild runs the plugin's code in the engine's process with the engine
// of its kind: a module's escouade.call goes to the Host over the control
// channel.
func runChild(ctx context.Context, langs []Language, boot *engineBoot, code []byte, in io.Reader, rep *ctlReporter, exit func(int, string)) error {
	var lang Language
	for _, l := range langs {
		if l != nil && l.Kind() == boot.Kind {
			lang = l
		}
	}
	if lang == nil {
		pkg := languagePackages[boot.Kind]
		return fmt.Errorf("this program's EngineMain was given no engine of %q: pass it %s's Language()", boot.Kind, pkg)
	}
	prog, err := lang.Compile(ctx, boot.Name, code, engine.Options{Pages: boot.Pages, Cache: boot.Cache})
	if err != nil {
		return err
	}
	defer prog.Close()
	ctl := rep.c
	ctl.tell(readyMethod, nil)
	inst := &engine.Instance{ID: boot.ID, In: in, Out: os.Stdout, Stderr: os.Stderr, Report: rep, Script: boot.Script}
	inst.Script.Hard = func(why string) {
		rep.Say(slog.LevelError, "script interrupted: "+why)
		exit(exitTurn, "interrupted: "+why)
	}
	turn := engine.NewTurnWatch(boot.Turn, func(why string) {
		rep.Say(slog.LevelError, "module interrupted: "+why)
		exit(exitTurn, "interrupted: "+why)
	})
	if boot.Kind == "wasm" {
		inst.Turn = turn
	}
	inst.Call = func(ctx context.Context, method string, params []byte, _ <-chan struct{}) []byte {
		defer turn.Wait()()
		if !utf8.ValidString(method) || strings.HasPrefix(method, "engine/") || len(method) > maxMethodName {
			// engine/* names the engine's own calls, not the protocol's.
			return appendABIError(nil, errorf(protocol.CodeMethodNotFound, "method not found: %s", logtext.Quote(method))) // no protocol method is so named
		}
		params, answer := abiParams(params)
		if answer != nil {
			return answer
		}
		res, err := ctl.call(method, params)
		var je *jsonrpc.Error
		switch {
		case errors.As(err, &je):
			return appendABIError(nil, &protocol.Error{Code: protocol.Code(je.Code), Message: je.Message})
		case err != nil:
			// The Host is gone: the instance ends.
			panic(fmt.Errorf("escouade.call: %w", err))
		}
		return res
	}
	return prog.Run(ctx, inst)
}

// maxMethodName bounds the name of a method a module calls: no protocol
// method's name is near it, and a longer one is answered here, never sent
// (nor echoed whole).
const maxMethodName = 256

// A ctlClient is the engine's end of the control channel. A module's call
// is synchronous, so it is written and its answer read on the caller's own
// goroutine, blocking: two pipes crossed, and no hand-off between
// goroutines. The Host's end is a jsonrpc.Conn; the Host only answers.
type ctlClient struct {
	wmu sync.Mutex // one line at a time
	w   *os.File

	max int // the longest line the Host reads; 0 for no bound

	rmu   sync.Mutex // one call at a time
	lr    *jsonrpc.LineReader
	next  int64
	items []jsonrpc.Item
}

func (c *ctlClient) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(line)
	return err
}

// tell calls method with params, encoded with encoding/json, and waits
// for the Host to have heard it: what the engine says just before it ends
// is not lost. A Host that is gone hears nothing.
func (c *ctlClient) tell(method string, params any) {
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return
		}
	}
	c.call(method, p)
}

// call calls method with params (a JSON object, or nil) and returns the
// result, or the Host's error answer as a *jsonrpc.Error.
func (c *ctlClient) call(method string, params []byte) ([]byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.next++
	id := strconv.FormatInt(c.next, 10)
	line := jsonrpc.AppendRequest(nil, c.next, method, params)
	if c.max > 0 && len(line) > c.max {
		// The Host would discard the line unread and answer no id: the
		// call would wait for ever. It is refused here.
		return nil, &jsonrpc.Error{Code: int64(protocol.CodeInvalidParams), Message: fmt.Sprintf("invalid params: a call of %d bytes; the control channel takes %d", len(line), c.max)}
	}
	if err := c.write(append(line, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := c.lr.Next()
		if err != nil {
			return nil, err
		}
		var perr *jsonrpc.Error
		c.items, _, perr = jsonrpc.Parse(line, c.items[:0])
		if perr != nil {
			return nil, perr
		}
		for _, it := range c.items {
			if it.Kind != jsonrpc.KindResponse || string(it.ID) != id {
				continue // an answer to a call given up: none is, but skip it
			}
			if it.Error != nil {
				return nil, it.Error
			}
			return append([]byte(nil), it.Result...), nil
		}
	}
}

// A ctlReporter sends an engine's journal entries to the Host.
type ctlReporter struct{ c *ctlClient }

// A report is the params of reportMethod.
type report struct {
	Level   int               `json:"level"` // a slog.Level, as a number
	Msg     string            `json:"msg"`
	Limited bool              `json:"limited,omitempty"` // the plugin caused it
	Fatal   bool              `json:"fatal,omitempty"`   // why the engine ends
	Attrs   map[string]string `json:"attrs,omitempty"`
}

func (r *ctlReporter) send(rp report, attrs []slog.Attr) {
	if len(attrs) > 0 {
		rp.Attrs = make(map[string]string, len(attrs))
		for _, a := range attrs {
			rp.Attrs[a.Key] = a.Value.String()
		}
	}
	r.c.tell(reportMethod, rp)
}

func (r *ctlReporter) Say(level slog.Level, msg string, attrs ...slog.Attr) {
	r.send(report{Level: int(level), Msg: msg}, attrs)
}

func (r *ctlReporter) Limited(level slog.Level, msg string, attrs ...slog.Attr) {
	r.send(report{Level: int(level), Msg: msg, Limited: true}, attrs)
}

// fatal says why the engine ends.
func (r *ctlReporter) fatal(msg string) {
	r.send(report{Level: int(slog.LevelError), Msg: msg, Fatal: true}, nil)
}
