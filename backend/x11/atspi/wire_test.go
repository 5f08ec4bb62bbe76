package atspi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// The codec is checked against godbus in both directions: what we encode,
// godbus decodes to the intended values; what godbus encodes (in either
// byte order), we decode.

func TestEncodeCall(t *testing.T) {
	for _, tc := range []struct {
		c    *methodCall
		body []any
	}{
		{call(":1.5", "/org/a11y/atspi/accessible/7", ifAccessible, "GetState"), nil},
		{call("", pathCache, ifCache, "GetItems"), nil},
		{callInt(":1.5", "/p", ifAction, "GetName", -3), []any{int32(-3)}},
		{callUint(":1.5", "/p", ifComponent, "GetExtents", 0), []any{uint32(0)}},
		{getProperty(":1.5", "/p", ifValue, "CurrentValue"), []any{ifValue, "CurrentValue"}},
		{getAllProperties("", "/p", ifAccessible), []any{ifAccessible}},
		{getText("", "/p"), []any{int32(0), int32(-1)}},
		{&methodCall{path: "/p", iface: ifProperties, member: "Set", sig: "ssv", args: func(e *encoder) {
			e.str(ifValue)
			e.str("CurrentValue")
			e.sig("d")
			e.f64(2.5)
		}}, []any{ifValue, "CurrentValue", dbus.MakeVariant(2.5)}},
		{&methodCall{path: "/p", iface: ifEditableText, member: "SetTextContents", sig: "s",
			args: func(e *encoder) { e.str("héllo ✓") }}, []any{"héllo ✓"}},
		{getMatchesAll(":1.5", "/p", 7), []any{
			[]any{[]int32{0, 0}, int32(1), map[string]string{}, int32(1), []int32{0, 0, 0, 0}, int32(1), []string{}, int32(1), false},
			uint32(1), int32(7), true}},
	} {
		// A prefix checks that alignment is relative to the message.
		raw := appendCall([]byte{1, 2, 3}, 42, tc.c)[3:]
		m, err := dbus.DecodeMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: godbus cannot decode our message: %v", tc.c.member, err)
		}
		want := map[dbus.HeaderField]dbus.Variant{
			dbus.FieldPath:   dbus.MakeVariant(dbus.ObjectPath(tc.c.path)),
			dbus.FieldMember: dbus.MakeVariant(tc.c.member),
		}
		if tc.c.iface != "" {
			want[dbus.FieldInterface] = dbus.MakeVariant(tc.c.iface)
		}
		if tc.c.dest != "" {
			want[dbus.FieldDestination] = dbus.MakeVariant(tc.c.dest)
		}
		if tc.c.sig != "" {
			want[dbus.FieldSignature] = dbus.MakeVariant(dbus.ParseSignatureMust(tc.c.sig))
		}
		if m.Type != dbus.TypeMethodCall || m.Serial() != 42 || !reflect.DeepEqual(m.Headers, want) {
			t.Fatalf("%s: type %v serial %d headers %v, want %v", tc.c.member, m.Type, m.Serial(), m.Headers, want)
		}
		if len(m.Body) != len(tc.body) {
			t.Fatalf("%s: body %#v, want %#v", tc.c.member, m.Body, tc.body)
		}
		for i := range tc.body {
			if !reflect.DeepEqual(m.Body[i], tc.body[i]) {
				t.Fatalf("%s: body[%d] = %#v, want %#v", tc.c.member, i, m.Body[i], tc.body[i])
			}
		}
	}
}

// reply encodes a method return carrying body in byte order.
func reply(t testing.TB, order binary.ByteOrder, serial uint32, body ...any) []byte {
	t.Helper()
	m := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
		dbus.FieldReplySerial: dbus.MakeVariant(serial),
		dbus.FieldSender:      dbus.MakeVariant(":1.7"),
	}, Body: body}
	if len(body) > 0 {
		m.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(body...))
	}
	var b bytes.Buffer
	if err := m.EncodeTo(&b, order); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readOne decodes one message from raw.
func readOne(t testing.TB, raw []byte) *message {
	t.Helper()
	w := &wireConn{r: bufio.NewReader(bytes.NewReader(raw))}
	m, err := w.readMessage()
	if err != nil {
		t.Fatalf("readMessage: %v", err)
	}
	return m
}

type ref struct {
	Bus  string
	Path dbus.ObjectPath
}

// relation is one entry of Accessible.GetRelationSet's a(ua(so)).
type relation struct {
	Kind    uint32
	Targets []ref
}

func TestReadLabelledBy(t *testing.T) {
	for _, c := range []struct {
		rels []relation
		want string
	}{
		{[]relation{{1, []ref{{":1.7", "/x"}}}, {relationLabelledBy, []ref{{":1.9", "/other"}, {":1.7", "/l"}}}}, "/l"},
		{[]relation{{relationLabelledBy, []ref{{":1.7", pathNull}}}}, ""},
		{nil, ""},
	} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			w := &wireConn{r: bufio.NewReader(bytes.NewReader(reply(t, order, 1, c.rels)))}
			m, err := w.readMessage()
			if err != nil {
				t.Fatal(err)
			}
			d, err := expect(m, "a(ua(so))")
			if err != nil {
				t.Fatal(err)
			}
			if got := readLabelledBy(d, ":1.7"); got != c.want {
				t.Errorf("%v: got %q, want %q", c.rels, got, c.want)
			}
		}
	}
}

func TestDecodeReplies(t *testing.T) {
	type gtkItem struct {
		Self, App, Parent ref
		Index, Count      int32
		Ifaces            []string
		Name              string
		Role              uint32
		Desc              string
		States            []uint32
	}
	type qtItem struct {
		Self, App, Parent ref
		Children          []ref
		Ifaces            []string
		Name              string
		Role              uint32
		Desc              string
		States            []uint32
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		// GTK's cache.
		items := []gtkItem{
			{ref{":1.7", pathRoot}, ref{":1.7", pathRoot}, ref{":1.1", pathRoot}, -1, 1,
				[]string{ifAccessible, ifApplication, ifCollection}, "app", 75, "", []uint32{0, 0}},
			{ref{":1.7", "/org/a11y/atspi/accessible/3"}, ref{":1.7", pathRoot}, ref{":1.7", pathRoot}, 0, 0,
				[]string{ifAccessible, ifAction, ifComponent}, "OK ✓", 43, "does it", []uint32{1<<stateShowing | 1<<stateManagesDescendants, 1 << (43 - 32)}},
		}
		w := newWalk(nil, ":1.7", "", 100, 10, &memo{})
		m := readOne(t, reply(t, order, 1, items))
		w.addCacheItems(m)
		r := w.recs["/org/a11y/atspi/accessible/3"]
		if r == nil || !r.base || r.name != "OK ✓" || r.role != 43 || r.desc != "does it" || r.parent != pathRoot ||
			r.ifs != hasAction|hasComponent || !r.states.has(stateShowing) || !r.states.has(stateManagesDescendants) || r.key != 0 || r.childCount != 0 {
			t.Fatalf("%v: GTK cache item decoded as %+v", order, r)
		}
		if root := w.recs[pathRoot]; root == nil || root.parent != "" || root.name != "app" {
			t.Fatalf("%v: root decoded as %+v (its parent is on another bus)", order, root)
		}
		// Qt's cache.
		qt := []qtItem{{ref{":1.7", "/a/1"}, ref{":1.7", pathRoot}, ref{":1.7", pathRoot},
			[]ref{{":1.7", "/a/3"}, {":1.7", "/a/2"}}, []string{ifAccessible, ifText, ifEditableText}, "edit", 61, "", []uint32{1 << stateEditable, 0}}}
		w = newWalk(nil, ":1.7", "", 100, 10, &memo{})
		w.addCacheItems(readOne(t, reply(t, order, 1, qt)))
		r = w.recs["/a/1"]
		if r == nil || !r.kidsKnown || !reflect.DeepEqual(r.kids, []string{"/a/3", "/a/2"}) || r.childCount != 2 ||
			r.ifs != hasText|hasEditableText || r.role != 61 {
			t.Fatalf("%v: Qt cache item decoded as %+v", order, r)
		}
		// Accessible properties, with keys we skip around.
		props := map[string]dbus.Variant{
			"Attributes":  dbus.MakeVariant(map[string]string{"toolkit": "gtk"}),
			"Name":        dbus.MakeVariant("Row 5"),
			"Locale":      dbus.MakeVariant("C.UTF-8"),
			"Parent":      dbus.MakeVariant(ref{":1.7", "/org/a11y/atspi/accessible/16"}),
			"ChildCount":  dbus.MakeVariant(int32(3)),
			"Description": dbus.MakeVariant("desc"),
			"Odd":         dbus.MakeVariant(dbus.MakeVariant([]any{int64(1), 2.5, []byte{1, 2}})),
		}
		m = readOne(t, reply(t, order, 1, props))
		d, err := expect(m, "a{sv}")
		if err != nil {
			t.Fatal(err)
		}
		p := readAccessibleProps(d)
		if d.err != nil || p != (accessibleProps{name: "Row 5", desc: "desc", parentBus: ":1.7", parent: "/org/a11y/atspi/accessible/16", childCount: 3}) {
			t.Fatalf("%v: properties decoded as %+v (%v)", order, p, d.err)
		}
		// Extents, hidden or not.
		for _, tc := range []struct {
			in   [4]int32
			want image.Rectangle
		}{{[4]int32{10, 20, 30, 40}, image.Rect(10, 20, 40, 60)}, {[4]int32{hiddenCoord, hiddenCoord, 5, 5}, image.Rectangle{}},
			{[4]int32{3, 3, 0, 10}, image.Rectangle{}}} {
			m = readOne(t, reply(t, order, 1, struct{ X, Y, W, H int32 }{tc.in[0], tc.in[1], tc.in[2], tc.in[3]}))
			d, _ := expect(m, "(iiii)")
			if got, _ := readExtents(d); got != tc.want {
				t.Fatalf("%v: extents %v decoded as %v", order, tc.in, got)
			}
		}
		// Variants, states, interfaces, references.
		m = readOne(t, reply(t, order, 1, dbus.MakeVariant(int32(3))))
		if d, _ := expect(m, "v"); d == nil {
			t.Fatal("no v")
		} else if n, ok := readVariantInt(d); !ok || n != 3 {
			t.Fatalf("%v: v(i) decoded as %d %v", order, n, ok)
		}
		m = readOne(t, reply(t, order, 1, dbus.MakeVariant(0.25)))
		if d, _ := expect(m, "v"); d == nil {
			t.Fatal("no v")
		} else if f, ok := readVariantFloat(d); !ok || f != 0.25 {
			t.Fatalf("%v: v(d) decoded as %v %v", order, f, ok)
		}
		m = readOne(t, reply(t, order, 1, []ref{{":1.7", "/a"}, {":1.9", "/b"}, {":1.7", pathNull}, {":1.7", "/c"}}))
		var paths []string
		d, _ = expect(m, "a(so)")
		readRefs(d, ":1.7", func(p string) { paths = append(paths, p) })
		if !reflect.DeepEqual(paths, []string{"/a", "/c"}) {
			t.Fatalf("%v: references decoded as %v", order, paths)
		}
		m = readOne(t, reply(t, order, 1, []uint32{1<<stateFocused | 1<<stateShowing, 1}))
		d, _ = expect(m, "au")
		if s := readStates(d); !reflect.DeepEqual(s.names(), []string{"focused", "showing", "indeterminate"}) {
			t.Fatalf("%v: states decoded as %v", order, s.names())
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	// Every truncation of a valid reply fails cleanly instead of panicking.
	raw := reply(t, binary.LittleEndian, 9, []ref{{":1.7", "/a"}}, "tail", map[string]dbus.Variant{"k": dbus.MakeVariant(int32(1))})
	for n := 0; n < len(raw); n++ {
		w := &wireConn{r: bufio.NewReader(bytes.NewReader(raw[:n]))}
		if _, err := w.readMessage(); err == nil {
			t.Fatalf("a message cut to %d of %d bytes decoded", n, len(raw))
		}
	}
	m := readOne(t, raw)
	if m.replySerial != 9 || m.sig != "a(so)sa{sv}" {
		t.Fatalf("reply serial %d signature %q", m.replySerial, m.sig)
	}
	// A body decoder that runs off the end reports it.
	d := &decoder{b: []byte{5, 0, 0, 0, 'a'}, order: binary.LittleEndian}
	if d.str(); d.err == nil {
		t.Fatal("a string longer than the body decoded")
	}
	d = &decoder{b: []byte{0xff, 0xff, 0xff, 0x7f}, order: binary.LittleEndian}
	if d.array(4); d.err == nil {
		t.Fatal("an array longer than the body decoded")
	}
	if _, err := expect(m, "as"); err == nil {
		t.Fatal("expect accepted the wrong signature")
	}
}

// FuzzReadMessage feeds arbitrary bytes to the message reader and the body
// decoders: they may fail, never panic.
func FuzzReadMessage(f *testing.F) {
	f.Add(reply(f, binary.LittleEndian, 1, []ref{{":1.7", "/a"}}))
	f.Add(reply(f, binary.BigEndian, 1, map[string]dbus.Variant{"Name": dbus.MakeVariant("x")}))
	f.Add(reply(f, binary.LittleEndian, 1, dbus.MakeVariant(dbus.MakeVariant(int32(1)))))
	f.Add(reply(f, binary.BigEndian, 1, []relation{{1, []ref{{":1.7", "/x"}}}, {relationLabelledBy, []ref{{":1.7", "/l"}}}}))
	f.Add(reply(f, binary.LittleEndian, 1, map[string]string{"DocType": "html", "URI": "https://example.com/"}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		w := &wireConn{r: bufio.NewReader(bytes.NewReader(raw))}
		m, err := w.readMessage()
		if err != nil {
			return
		}
		body := m.body
		body.skip(m.sig)
		for _, read := range []func(d *decoder){
			func(d *decoder) { readAccessibleProps(d) },
			func(d *decoder) { readRefs(d, ":1.7", func(string) {}) },
			func(d *decoder) { readStates(d) },
			func(d *decoder) { readIfaces(d) },
			func(d *decoder) { readExtents(d) },
			func(d *decoder) { readVariantFloat(d) },
			func(d *decoder) { readLabelledBy(d, ":1.7") },
			func(d *decoder) { readDocURL(d) },
			func(d *decoder) { newWalk(nil, ":1.7", "", 10, 10, &memo{}).addCacheItems(m) },
		} {
			d := m.body
			read(&d)
		}
	})
}

// TestReadDocURL reads a document's URL from its attributes as Gecko
// ("DocURL") and Chromium ("URI") give them.
func TestReadDocURL(t *testing.T) {
	for _, tt := range []struct {
		attrs map[string]string
		want  string
	}{
		{map[string]string{"DocType": "html", "MimeType": "text/html", "Title": "T", "URI": "https://c.example/"}, "https://c.example/"},
		{map[string]string{"W3C-doctype": "html", "DocURL": "https://g.example/#a", "MimeType": "text/html"}, "https://g.example/#a"},
		{map[string]string{"DocURL": "https://g.example/", "URI": "https://other.example/"}, "https://g.example/"},
		{map[string]string{"MimeType": "text/html"}, ""},
		{map[string]string{}, ""},
	} {
		m := readOne(t, reply(t, binary.LittleEndian, 1, tt.attrs))
		d, err := expect(m, "a{ss}")
		if err != nil {
			t.Fatal(err)
		}
		if got := readDocURL(d); d.err != nil || got != tt.want {
			t.Errorf("readDocURL(%v) = %q, %v; want %q", tt.attrs, got, d.err, tt.want)
		}
	}
}

func TestAddresses(t *testing.T) {
	for in, want := range map[string]string{
		"unix:path=/run/user/0/at-spi/bus,guid=abc": "/run/user/0/at-spi/bus",
		"unix:abstract=/tmp/dbus-x,guid=1":          "@/tmp/dbus-x",
		"unix:guid=1,path=/a%20b%2cc":               "/a b,c",
	} {
		if got, err := unixSocketPath(in); err != nil || got != want {
			t.Errorf("unixSocketPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"tcp:host=x,port=1", "unix:guid=1", "unix:path=/a%2", "nonsense"} {
		if _, err := unixSocketPath(in); err == nil {
			t.Errorf("unixSocketPath(%q) succeeded", in)
		}
	}
}

// fakePeer is a D-Bus peer on the other end of a socket pair: it answers
// EXTERNAL authentication, then each call by its member name. Echo returns
// the arguments, Fail an error, Slow answers after the next call, and Hang
// never answers.
func fakePeer(t *testing.T) *wireConn {
	t.Helper()
	a, b := socketPair(t)
	done := make(chan struct{})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		<-done
	})
	go func() {
		defer close(done)
		r := bufio.NewReader(b)
		if _, err := r.ReadString('\n'); err != nil { // \0AUTH EXTERNAL ...
			return
		}
		io.WriteString(b, "OK 0123456789abcdef\r\n")
		if _, err := r.ReadString('\n'); err != nil { // BEGIN
			return
		}
		var held *dbus.Message
		for {
			m, err := dbus.DecodeMessage(r)
			if err != nil {
				return
			}
			member := m.Headers[dbus.FieldMember].Value().(string)
			out := &dbus.Message{Type: dbus.TypeMethodReply, Headers: map[dbus.HeaderField]dbus.Variant{
				dbus.FieldReplySerial: dbus.MakeVariant(m.Serial()),
			}}
			switch member {
			case "Echo":
				out.Body = m.Body
				if len(m.Body) > 0 {
					out.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(m.Body...))
				}
			case "Fail":
				out.Type = dbus.TypeError
				out.Headers[dbus.FieldErrorName] = dbus.MakeVariant("org.freedesktop.DBus.Error.UnknownObject")
				out.Headers[dbus.FieldSignature] = dbus.MakeVariant(dbus.SignatureOf(""))
				out.Body = []any{"no such object"}
			case "Slow":
				held = out
				continue
			case "Hang":
				continue
			}
			// A signal first: the pipeline must skip it.
			sig := &dbus.Message{Type: dbus.TypeSignal, Headers: map[dbus.HeaderField]dbus.Variant{
				dbus.FieldPath: dbus.MakeVariant(dbus.ObjectPath("/x")), dbus.FieldInterface: dbus.MakeVariant("a.b"),
				dbus.FieldMember: dbus.MakeVariant("C"),
			}}
			sig.EncodeTo(b, binary.LittleEndian)
			if err := out.EncodeTo(b, binary.LittleEndian); err != nil {
				return
			}
			if held != nil {
				held.EncodeTo(b, binary.LittleEndian)
				held = nil
			}
		}
	}()
	w := &wireConn{c: a, r: bufio.NewReader(a)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.auth(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// socketPair returns the two ends of a connected unix socket pair: unlike
// net.Pipe, its writes are buffered, as a real connection's are.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

func TestPipeline(t *testing.T) {
	w := fakePeer(t)
	ctx := context.Background()
	p := newPipeline(ctx, w, time.Now().Add(5*time.Second), time.Second, 3)
	var got []string
	p.call(&methodCall{path: "/s", iface: "t.I", member: "Slow"}, func(m *message, err error) {
		got = append(got, "slow")
	})
	for i := range 20 {
		p.call(callInt("", "/e", "t.I", "Echo", int32(i)), func(m *message, callErr error) {
			if callErr != nil {
				t.Errorf("echo %d: %v", i, callErr)
				return
			}
			d, err := expect(m, "i")
			if err != nil {
				t.Errorf("echo %d: %v", i, err)
				return
			}
			if v := d.i32(); v != int32(i) {
				t.Errorf("echo %d came back %d", i, v)
			}
			got = append(got, "echo")
			if i == 0 {
				// A callback may queue more work.
				p.call(call("", "/f", "t.I", "Fail"), func(m *message, err error) {
					var ce *CallError
					if !errors.As(err, &ce) || !ce.gone() || ce.Message != "no such object" {
						t.Errorf("Fail: %v", err)
					}
					got = append(got, "fail")
				})
			}
		})
	}
	if err := p.run(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 22 || got[0] != "echo" || !strings.Contains(strings.Join(got, " "), "slow") {
		t.Fatalf("callbacks ran %v", got)
	}

	// An application that stops answering fails the pipeline at the call
	// timeout and closes the connection.
	p = newPipeline(ctx, w, time.Now().Add(5*time.Second), 100*time.Millisecond, 3)
	p.call(call("", "/h", "t.I", "Hang"), func(m *message, err error) { t.Error("a hung call completed") })
	start := time.Now()
	err := p.run()
	if !isTimeout(err) || time.Since(start) > 2*time.Second {
		t.Fatalf("hung call: err %v after %v", err, time.Since(start))
	}
	if w.dead == nil {
		t.Fatal("the connection survived a timeout")
	}
	if err := newPipeline(ctx, w, time.Now().Add(time.Second), time.Second, 1).run(); err == nil {
		t.Fatal("a dead connection ran a pipeline")
	}
}

func TestPipelineCancel(t *testing.T) {
	w := fakePeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	p := newPipeline(ctx, w, time.Now().Add(time.Minute), time.Minute, 1)
	p.call(call("", "/h", "t.I", "Hang"), func(m *message, err error) {})
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := p.run(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled pipeline: %v", err)
	}
}
