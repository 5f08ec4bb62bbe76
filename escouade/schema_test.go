package escouade_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/plugin"
	"shinken.dev/go/escouade/protocol"
)

const schemaPath = "schema/escouade-plugin-protocol-1.schema.json"

// schemaDoc is the protocol's schema as this repository keeps it.
var schemaDoc = sync.OnceValues(func() (map[string]any, error) {
	f, err := os.Open(schemaPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	return doc.(map[string]any), nil
})

// A validator checks every line a Host writes against the protocol's
// schema: the envelope, then a request's params or a response's result
// against x-methods, and an error's code against x-errors and the method's
// errors. It learns which method a response answers from the plugin's own
// lines.
type validator struct {
	t       testing.TB
	params  map[string]*jsonschema.Schema
	results map[string]*jsonschema.Schema
	info    map[string]methodInfo
	codes   map[int64]string

	mu       sync.Mutex
	calls    map[string]string // the plugin's request ids to their methods
	seen     map[string]bool   // what was checked: methods, results, errors
	checked  int
	abiSeq   int
	problems []string
}

type methodInfo struct {
	Direction    string   `json:"direction"`
	Notification bool     `json:"notification"`
	Errors       []string `json:"errors"`
}

// attachSchema checks agent/attach, which the schema names but does not
// define: its params are made of the schema's own definitions.
const attachSchema = `{"type":"object","properties":{"key":{"type":"string"},"agent":{"$ref":"%s#/definitions/Agent"}},"required":["key","agent"]}`

func newValidator(t testing.TB) *validator {
	t.Helper()
	doc, err := schemaDoc()
	if err != nil {
		t.Fatal(err)
	}
	id := doc["$id"].(string)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	att, _ := jsonschema.UnmarshalJSON(strings.NewReader(fmt.Sprintf(attachSchema, id)))
	if err := c.AddResource("test:agent-attach", att); err != nil {
		t.Fatal(err)
	}
	v := &validator{
		t: t, params: map[string]*jsonschema.Schema{}, results: map[string]*jsonschema.Schema{},
		info: map[string]methodInfo{}, codes: map[int64]string{},
		calls: map[string]string{}, seen: map[string]bool{},
	}
	raw, _ := os.ReadFile(schemaPath)
	var meta struct {
		Methods map[string]json.RawMessage `json:"x-methods"`
		Errors  map[string]struct {
			Code int64 `json:"code"`
		} `json:"x-errors"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	for name, m := range meta.Methods {
		var mi methodInfo
		json.Unmarshal(m, &mi)
		v.info[name] = mi
		ptr := id + "#/x-methods/" + strings.ReplaceAll(name, "/", "~1")
		if v.params[name], err = c.Compile(ptr + "/params"); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(m, []byte(`"result"`)) {
			if v.results[name], err = c.Compile(ptr + "/result"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, e := range meta.Errors {
		v.codes[e.Code] = name
	}
	v.info["agent/attach"] = methodInfo{Direction: "toPlugin", Notification: true}
	if v.params["agent/attach"], err = c.Compile("test:agent-attach"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		for _, p := range v.problems {
			t.Error(p)
		}
	})
	return v
}

func (v *validator) fail(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// fromPlugin notes a line the plugin wrote: its requests' ids.
func (v *validator) fromPlugin(line []byte) {
	var msgs []map[string]json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		json.Unmarshal(line, &msgs)
	} else {
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, m := range msgs {
		var method string
		if json.Unmarshal(m["method"], &method) == nil && m["id"] != nil {
			v.calls[string(m["id"])] = method
		}
	}
}

// fromHost checks a line the Host wrote.
func (v *validator) fromHost(line []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.checked++
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		v.fail("the Host wrote a line that is not JSON: %v: %.200s", err, line)
		return
	}
	if arr, ok := doc.([]any); ok {
		if len(arr) == 0 {
			v.fail("the Host wrote an empty batch")
		}
		v.seen["batch"] = true
		for _, el := range arr {
			v.message(el, line)
		}
		return
	}
	v.message(doc, line)
}

var envelope = []string{"jsonrpc", "id", "method", "params", "result", "error"}

func (v *validator) message(doc any, line []byte) {
	m, ok := doc.(map[string]any)
	if !ok {
		v.fail("the Host wrote a message that is not an object: %.200s", line)
		return
	}
	for k := range m {
		if !slices.Contains(envelope, k) {
			v.fail("the Host wrote the member %q: %.200s", k, line)
		}
	}
	if m["jsonrpc"] != "2.0" {
		v.fail(`the Host wrote no "jsonrpc":"2.0": %.200s`, line)
	}
	id, hasID := m["id"]
	if method, ok := m["method"].(string); ok {
		info, known := v.info[method]
		switch {
		case !known:
			v.fail("the Host sent %s, which the schema does not name", method)
			return
		case info.Direction != "toPlugin":
			v.fail("the Host sent %s, which goes the other way", method)
		case info.Notification && hasID:
			v.fail("the Host sent the notification %s with an id", method)
		case !info.Notification && !hasID:
			v.fail("the Host sent the request %s without an id", method)
		}
		params, has := m["params"]
		if !has {
			params = nil // the schema's "null" for shutdown: JSON-RPC leaves params out
		}
		if err := v.params[method].Validate(params); err != nil {
			v.fail("params of %s: %v\n%.300s", method, err, line)
		}
		v.seen[method] = true
		return
	}
	key, _ := json.Marshal(id)
	method := v.calls[string(key)]
	if res, ok := m["result"]; ok {
		if _, isErr := m["error"]; isErr {
			v.fail("the Host answered with both result and error: %.200s", line)
		}
		if method == "" {
			v.fail("the Host answered a request the plugin did not make: %.200s", line)
			return
		}
		s := v.results[method]
		if s == nil {
			v.fail("the Host answered %s, which has no result in the schema", method)
			return
		}
		if err := s.Validate(res); err != nil {
			v.fail("result of %s: %v\n%.300s", method, err, line)
		}
		v.seen["result:"+method] = true
		return
	}
	e, ok := m["error"].(map[string]any)
	if !ok {
		v.fail("the Host wrote a message that is neither request nor response: %.200s", line)
		return
	}
	for k := range e {
		if k != "code" && k != "message" && k != "data" {
			v.fail("the Host's error holds %q: %.200s", k, line)
		}
	}
	if _, ok := e["message"].(string); !ok {
		v.fail("the Host's error has no message: %.200s", line)
	}
	code, _ := e["code"].(json.Number)
	n, err := code.Int64()
	name, known := v.codes[n]
	if err != nil || !known {
		v.fail("the Host answered the code %v, which x-errors does not name: %.200s", e["code"], line)
		return
	}
	if errs := v.info[method].Errors; method != "" && errs != nil && !slices.Contains(errs, name) && !generic[name] {
		v.fail("the Host answered %s with %s, which its errors do not list", method, name)
	}
	v.seen["error:"+name] = true
}

// generic errors may answer any request.
var generic = map[string]bool{"parse": true, "invalidRequest": true, "methodNotFound": true, "invalidParams": true, "internal": true}

// wrap tees a RunFunc's streams through the validator.
func (v *validator) wrap(run escouade.RunFunc) escouade.RunFunc {
	return func(ctx context.Context, in io.Reader, out io.Writer) error {
		return run(ctx, io.TeeReader(in, lines(v.fromHost)), io.MultiWriter(lines(v.fromPlugin), out))
	}
}

// hookHost checks every line to and from h's in-process plugins, and every
// answer of escouade.call.
func (v *validator) hookHost(h *escouade.Host) {
	fromHost, fromPlugin := lines(v.fromHost), lines(v.fromPlugin)
	escouade.SetWireHooks(h, func(toPlugin bool, b []byte) {
		if toPlugin {
			fromHost.Write(b)
		} else {
			fromPlugin.Write(b)
		}
	}, v.abiAnswer)
}

// abiAnswer checks an answer of escouade.call to method, as the response
// it stands for.
func (v *validator) abiAnswer(method string, answer []byte) {
	v.mu.Lock()
	info, known := v.info[method]
	if known && info.Notification && info.Direction == "toEscouade" {
		// A notification made by escouade.call is answered null, or with
		// the error its params earn (checked below as an error response).
		if string(answer) == `{"result":null}` {
			v.mu.Unlock()
			return
		}
		if !bytes.HasPrefix(answer, []byte(`{"error":`)) {
			v.fail("escouade.call answered the notification %s with %s", method, answer)
			v.mu.Unlock()
			return
		}
	}
	v.abiSeq++
	id := fmt.Sprintf(`"abi-%d"`, v.abiSeq)
	v.calls[id] = method
	v.mu.Unlock()
	if len(answer) < 2 || answer[0] != '{' {
		v.mu.Lock()
		v.fail("escouade.call answered %s with %s", method, answer)
		v.mu.Unlock()
		return
	}
	v.fromHost(append([]byte(`{"jsonrpc":"2.0","id":`+id+`,`), answer[1:]...))
}

// transcript checks the transcript of one plugin process, written as
// withTranscript asks.
func (v *validator) transcript(path string) {
	f, err := os.Open(path)
	if err != nil {
		v.t.Fatal(err)
	}
	defer f.Close()
	v.mu.Lock()
	v.calls = map[string]string{} // ids are the process's own
	v.mu.Unlock()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if len(l) == 0 {
			continue
		}
		switch l[0] {
		case '<':
			v.fromHost(l[1:])
		case '>':
			v.fromPlugin(l[1:])
		}
	}
}

// need checks that each of what was seen.
func (v *validator) need(t *testing.T, what ...string) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	var missing []string
	for _, w := range what {
		if !v.seen[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		var seen []string
		for s := range v.seen {
			seen = append(seen, s)
		}
		sort.Strings(seen)
		t.Errorf("never checked %v; checked %v", missing, seen)
	}
}

// lines calls fn with each line written.
func lines(fn func([]byte)) io.Writer {
	var partial []byte
	var mu sync.Mutex
	return writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		partial = append(partial, b...)
		for {
			i := bytes.IndexByte(partial, '\n')
			if i < 0 {
				break
			}
			if i > 0 {
				fn(append([]byte(nil), partial[:i]...))
			}
			partial = partial[i+1:]
		}
		return len(b), nil
	})
}

// failingStore is a keychain that cannot be reached for one key.
type failingStore struct{ escouade.SecretMap }

func (s failingStore) Secret(ctx context.Context, owner escouade.SecretOwner, key string) (string, bool, error) {
	if key == "broken" {
		return "", false, errors.New("no bus")
	}
	return s.SecretMap.Secret(ctx, owner, key)
}

// TestHostMessagesValidate drives a plugin through every message the Host
// sends, and every answer it gives, and checks each against the schema.
func TestHostMessagesValidate(t *testing.T) {
	v := newValidator(t)
	root := t.TempDir()
	os.WriteFile(root+"/.escouade.yml", []byte("plugins:\n  full:\n    lang: fr\n"), 0o644)
	h, _ := newHost(t, &escouade.Options{
		Secrets:  failingStore{escouade.SecretMap{"full": {"token": "s3cret"}}},
		Projects: escouade.ProjectMap{"p1": {Project: protocol.Project{ID: "p1", Name: "One"}, Root: root}},
		Agents:   escouade.AgentMap{"k1": {Agent: protocol.Agent{ID: "a1", Name: "Ada"}, Key: "k1"}},
		Lang:     "fr",
	})
	dir := writePlugin(t, "full", `"run":{"command":["x"]},
		"permissions":{"events":["agent.created","ticket.column"],"decide":true,"secrets":["token","absent","broken"]},
		"contributes":{"settings":{"lang":{"type":"string","default":"en"},"max":{"type":"number","default":3}}}`,
		map[string]string{"rules.json": `{"a":1}`, ".env": "X=1", "bin.dat": "\xff\xfe", "big.txt": strings.Repeat("a", 300<<10)})
	os.Symlink("/etc/hostname", dir+"/out")
	m, err := manifest.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *plugin.Conn, 1)
	attached := make(chan protocol.AttachParams, 1)
	facts := make(chan protocol.Fact, 4)
	hs := plugin.Handlers{
		Initialize: func(ctx context.Context, c *plugin.Conn, p protocol.InitializeParams) (map[string]any, error) {
			conns <- c
			return map[string]any{"batch": true}, nil
		},
		Fact:   func(ctx context.Context, c *plugin.Conn, f protocol.Fact) { facts <- f },
		Decide: goodHandlers.Decide,
		Attach: func(ctx context.Context, c *plugin.Conn, a protocol.AttachParams) { attached <- a },
	}
	ctx := context.Background()
	p, err := h.StartFunc(ctx, m, dir, v.wrap(func(ctx context.Context, in io.Reader, out io.Writer) error {
		return plugin.Serve(ctx, in, out, hs)
	}))
	if err != nil {
		t.Fatal(err)
	}
	c := <-conns

	// Facts, with and without what they are about.
	if _, err := h.Fact(ctx, "agent.created", map[string]any{"by": "me"}, escouade.About{
		Project: "p1", Ticket: &protocol.Ticket{ID: "t", Key: "ESC-1", Title: "T"}, Agent: &protocol.Agent{ID: "a", Name: "A"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Fact(ctx, "ticket.column", nil, escouade.About{}); err != nil {
		t.Fatal(err)
	}
	<-facts
	<-facts
	d, err := h.Decide(ctx, protocol.PermissionRequest{ID: "r1", Kind: "command", Tool: "exec", Input: map[string]any{"command": "rm -rf /"}},
		escouade.About{Project: "p1", Agent: &protocol.Agent{ID: "a", Name: "A"}, Ticket: &protocol.Ticket{ID: "t", Key: "K", Title: "T"}})
	if err != nil || d.Verdict != protocol.Deny {
		t.Fatalf("Decide = %+v, %v", d, err)
	}
	if err := p.Attach(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	<-attached

	// The plugin's requests, each answer checked.
	if s, ok, err := c.Secret(ctx, "token"); err != nil || !ok || s != "s3cret" {
		t.Errorf("Secret(token) = %q, %v, %v", s, ok, err)
	}
	if _, ok, err := c.Secret(ctx, "absent"); err != nil || ok {
		t.Errorf("Secret(absent) = %v, %v", ok, err)
	}
	if _, _, err := c.Secret(ctx, "other"); !errors.Is(err, protocol.ErrNotYours) {
		t.Errorf("Secret(other) = %v", err)
	}
	if _, _, err := c.Secret(ctx, "broken"); !errors.Is(err, protocol.ErrKeychain) {
		t.Errorf("Secret(broken) = %v", err)
	}
	if s, err := c.Settings(ctx, "p1"); err != nil || s["lang"] != "fr" || s["max"] != 3.0 {
		t.Errorf("Settings(p1) = %v, %v", s, err)
	}
	if s, err := c.ReadFile(ctx, "rules.json"); err != nil || s != `{"a":1}` {
		t.Errorf("ReadFile(rules.json) = %q, %v", s, err)
	}
	for path, want := range map[string]error{
		".env": protocol.ErrRefused, "../x": protocol.ErrRefused, "out": protocol.ErrRefused, "plugin.json": protocol.ErrRefused,
		"nope.txt": protocol.ErrNotFound, "bin.dat": protocol.ErrFailed, "big.txt": protocol.ErrFailed,
	} {
		if _, err := c.ReadFile(ctx, path); !errors.Is(err, want) {
			t.Errorf("ReadFile(%s) = %v, want %v", path, err, want)
		}
	}
	if err := c.Call(ctx, "net/fetch", map[string]string{"url": "https://example.com"}, nil); !errors.Is(err, protocol.ErrMethodNotFound) {
		t.Errorf("net/fetch = %v", err)
	}
	if err := c.Call(ctx, "secrets/get", map[string]int{"key": 5}, nil); !errors.Is(err, protocol.ErrInvalidParams) {
		t.Errorf("secrets/get with a number = %v", err)
	}
	var s1, s2 any
	batch := []plugin.BatchCall{
		{Method: "secrets/get", Params: map[string]string{"key": "token"}, Result: &s1},
		{Method: "settings/get", Params: map[string]string{}, Result: &s2},
		{Method: "log", Params: map[string]string{"level": "info", "message": "in a batch"}, Notify: true},
	}
	if err := c.Batch(ctx, batch); err != nil || batch[0].Err != nil || s1 != "s3cret" || batch[1].Err != nil {
		t.Errorf("Batch = %v; %+v", err, batch)
	}

	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	v.need(t, "initialize", "events/fact", "permissions/decide", "agent/attach", "shutdown", "batch",
		"result:secrets/get", "result:settings/get", "result:files/read",
		"error:notYours", "error:keychain", "error:refused", "error:notFound", "error:failed",
		"error:methodNotFound", "error:invalidParams")
}

// TestErrorCodesMatchSchema holds the Go constants to the schema's x-errors.
func TestErrorCodesMatchSchema(t *testing.T) {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Errors map[string]struct {
			Code int64 `json:"code"`
		} `json:"x-errors"`
	}
	json.Unmarshal(raw, &meta)
	codes := []protocol.Code{
		protocol.CodeParse, protocol.CodeInvalidRequest, protocol.CodeMethodNotFound, protocol.CodeInvalidParams,
		protocol.CodeInternal, protocol.CodeNotYours, protocol.CodeKeychain, protocol.CodeRefused,
		protocol.CodeFailed, protocol.CodeNotFound,
	}
	if len(codes) != len(meta.Errors) {
		t.Errorf("%d codes in Go, %d in the schema", len(codes), len(meta.Errors))
	}
	for _, c := range codes {
		e, ok := meta.Errors[c.String()]
		if !ok || e.Code != int64(c) {
			t.Errorf("%s = %d; the schema says %v", c, int64(c), e.Code)
		}
	}
}

// TestSchemaCopyIsTheContract checks that the embedded schema is the file
// kept in schema/, which tests validate against.
func TestSchemaCopyIsTheContract(t *testing.T) {
	if _, err := schemaDoc(); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"initialize", "permissions/decide", "files/read"} {
		if protocol.MethodTimeout(m) == 0 {
			t.Errorf("no timeout for %s: the embedded schema was not read", m)
		}
	}
	if got := protocol.MethodTimeout("permissions/decide"); got.Milliseconds() != 500 {
		t.Errorf("permissions/decide times out after %v, want 500ms", got)
	}
	if got := protocol.MethodTimeout("secrets/get"); got.Milliseconds() != 5000 {
		t.Errorf("secrets/get times out after %v, want the default 5s", got)
	}
}

// TestValidatorCatches checks the checker: each line breaks the schema.
func TestValidatorCatches(t *testing.T) {
	v := newValidator(t)
	v.fromPlugin([]byte(`{"jsonrpc":"2.0","id":7,"method":"files/read","params":{"path":"a"}}`))
	bad := []string{
		`not json`,
		`[]`,
		`{"jsonrpc":"2.0","method":"events/fact","params":{"name":"no.such.fact","version":1,"seq":1,"at":"x","data":{}}}`,
		`{"jsonrpc":"2.0","method":"events/fact","params":{"name":"agent.created","version":1,"seq":1,"at":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"events/fact","params":{"name":"agent.created","version":1,"seq":1,"at":"x","data":{}}}`,
		`{"jsonrpc":"2.0","method":"permissions/decide","params":{"request":{"id":"r","kind":"k"},"project":{"id":"p","name":"P","private":false}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"permissions/decide","params":{"request":{"id":"r","kind":"k"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"secrets/get","params":{"key":"k"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such"}`,
		`{"jsonrpc":"2.0","id":5,"method":"shutdown","params":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":5}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"not yours"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32003}}`,
		`{"jsonrpc":"2.0","id":8,"result":"x"}`,
		`{"jsonrpc":"1.0","method":"agent/attach","params":{"key":"k","agent":{"id":"a","name":"n"}}}`,
		`{"jsonrpc":"2.0","method":"agent/attach","params":{"key":"k"}}`,
		`{"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"m"},"extra":1}`,
	}
	for _, l := range bad {
		before := len(v.problems)
		v.fromHost([]byte(l))
		if len(v.problems) == before {
			t.Errorf("the validator let through %s", l)
		}
	}
	good := []string{
		`{"jsonrpc":"2.0","id":7,"result":"text"}`,
		`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	}
	for _, l := range good {
		before := len(v.problems)
		v.fromHost([]byte(l))
		if len(v.problems) != before {
			t.Errorf("the validator refused %s: %s", l, v.problems[before:])
		}
	}
	v.problems = nil // they were the point
}
