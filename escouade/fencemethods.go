package escouade

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unicode/utf8"

	"shinken.dev/go/escouade/internal/beneath"
	"shinken.dev/go/escouade/protocol"
	"shinken.dev/go/internal/jsonrpc"
)

// An inprocMethod serves a request only a plugin run in-process may make.
// It returns what a method does (see method).
type inprocMethod func(ctx context.Context, c *call, params []byte) (any, error)

// inprocMethods are what a plugin run in-process (run.wasm, run.js) may
// call beyond commandMethods: it has no network, files or programs of its
// own, and reaches them through the Host, under its permissions.
var inprocMethods = map[string]inprocMethod{
	"timer/set":    timerSet,
	"timer/cancel": timerCancel,
	"fs/read":      fsRead,
	"fs/write":     fsWrite,
	"fs/stat":      fsStat,
	"fs/list":      fsList,
	"fs/canon":     fsCanon,
	"proc/spawn":   procSpawn,
	"proc/write":   procWrite,
	"proc/kill":    procKill,
	"net/fetch":    netFetch,
	"net/stream":   netStream,
	"net/credit":   netCredit,
	"net/cancel":   netCancel,
	"ws/open":      wsOpen,
	"ws/send":      wsSend,
	"ws/close":     wsClose,
}

// resources are what a plugin opened during one instance: they end with
// it, whatever way it ends.
type resources struct {
	inst   *instance
	ctx    context.Context // ends when the instance ends
	cancel context.CancelFunc
	wg     sync.WaitGroup // the goroutines of programs, streams and sockets

	mu       sync.Mutex
	closed   bool
	next     int64 // the last id given, to a timer, program, stream or socket
	starting int   // programs being started, counted with procs
	opening  int   // streams being opened, counted with streams
	dialing  int   // sockets being opened, counted with sockets
	timers   map[int64]*timerEntry
	procs    map[int64]*program
	streams  map[int64]*stream
	sockets  map[int64]*socket
}

func newResources(inst *instance) *resources {
	r := &resources{
		inst:    inst,
		timers:  map[int64]*timerEntry{},
		procs:   map[int64]*program{},
		streams: map[int64]*stream{},
		sockets: map[int64]*socket{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// nextID returns a new id; r.mu must be held. Ids are never reused within
// an instance, so that a late message never names the wrong thing.
func (r *resources) nextID() int64 {
	r.next++
	return r.next
}

// close ends everything the instance opened: timers are stopped, programs
// killed with their groups, streams and sockets closed. It returns once
// their goroutines have ended.
func (r *resources) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.wg.Wait()
		return
	}
	r.closed = true
	r.cancel()
	for id, t := range r.timers {
		t.t.Stop()
		delete(r.timers, id)
	}
	procs := make([]*program, 0, len(r.procs))
	for _, pr := range r.procs {
		procs = append(procs, pr)
	}
	socks := make([]*socket, 0, len(r.sockets))
	for _, s := range r.sockets {
		socks = append(socks, s)
	}
	r.mu.Unlock()
	for _, pr := range procs {
		pr.kill()
	}
	for _, s := range socks {
		s.conn.CloseNow()
	}
	r.wg.Wait()
}

// notify sends the plugin a notification of the instance; a connection
// that has ended drops it.
func (r *resources) notify(method string, params any) error {
	return r.inst.conn.Notify(method, params)
}

// marshalResult encodes a method's result: nil is null.
func marshalResult(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return []byte("null"), nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(v)
}

// readPluginFile reads name in the plugin's folder dir, through os.Root,
// up to max bytes. It opens without blocking and reads only a regular
// file: a FIFO, which a plugin's program can make in its folder, would
// block open(2) until someone writes to it, and a device read for ever.
func readPluginFile(dir, name string, max int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	// Non-blocking, no link, a regular file: a FIFO there does not hold
	// Start.
	f, _, err := beneath.OpenRegular(real, filepath.ToSlash(filepath.Clean(name)), false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", name, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", name, max)
	}
	return data, nil
}

// tempDir returns the plugin's temporary folder, made at its first use and
// removed when the plugin stops.
func (p *Plugin) tempDir() (string, error) {
	p.tmpMu.Lock()
	defer p.tmpMu.Unlock()
	switch p.tmp {
	case "-":
		return "", protocol.ErrClosed
	case "":
		dir, err := os.MkdirTemp(p.h.opts.TempDir, "escouade-"+p.m.ID+"-")
		if err != nil {
			return "", err
		}
		p.tmp = dir
	}
	return p.tmp, nil
}

// attachedAgent returns the agent attached to the plugin under key: a
// plugin names only the agents it was given.
func (p *Plugin) attachedAgent(key string) (*AgentInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(p.attached, func(a *AgentInfo) bool { return a.Key == key })
	if i < 0 {
		return nil, errorf(protocol.CodeRefused, "refused: no agent %q is attached to the plugin", key)
	}
	return p.attached[i], nil
}

// textOrBase64 returns data as text when it is UTF-8, or as base64.
func textOrBase64(data []byte) (text string, b64 string, isText bool) {
	if utf8.Valid(data) {
		return string(data), "", true
	}
	return "", base64.StdEncoding.EncodeToString(data), false
}

// utf8Cut returns how much of b may go as text now: all of it but an
// incomplete character at its end, which waits for the bytes that follow.
func utf8Cut(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return len(b) // ASCII: nothing is cut
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return len(b) - i
			}
			return len(b)
		}
	}
	return len(b)
}

// stringMap decodes an object of strings (headers, env).
func stringMap(v []byte) (map[string]string, error) {
	if jsonrpc.KindOf(v) != jsonrpc.KindObject {
		return nil, errWantObject
	}
	m := map[string]string{}
	err := jsonrpc.Members(v, func(k, val []byte) error {
		s, err := str(val)
		if err != nil {
			return &protocol.FieldError{Path: string(k), Err: err}
		}
		m[string(k)] = s
		return nil
	})
	return m, err
}

// stringList decodes an array of strings.
func stringList(v []byte) ([]string, error) {
	if jsonrpc.KindOf(v) != jsonrpc.KindArray {
		return nil, fmt.Errorf("want an array of strings")
	}
	out := []string{}
	err := jsonrpc.Elements(v, func(i int, e []byte) error {
		s, err := str(e)
		if err != nil {
			return &protocol.FieldError{Path: fmt.Sprintf("[%d]", i), Err: err}
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// id decodes the integer that names a timer, program, stream or socket.
func idParam(params []byte, name string) (int64, error) {
	var id int64
	seen, err := object(paramsObject(params), []string{name}, false, func(_ int, v []byte) (err error) {
		id, err = integer(v)
		return err
	})
	if err == nil {
		err = require(seen, 1, []string{name})
	}
	return id, err
}
