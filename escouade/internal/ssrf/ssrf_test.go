package ssrf_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"shinken.dev/go/escouade/internal/ssrf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		addr  string
		class ssrf.Class
	}{
		{"8.8.8.8", ssrf.Public},
		{"203.0.113.7", ssrf.Public},
		{"2606:4700::1111", ssrf.Public},
		{"2001:db8::1", ssrf.Public},
		{"127.0.0.1", ssrf.Loopback},
		{"127.255.0.9", ssrf.Loopback},
		{"::1", ssrf.Loopback},
		{"10.1.2.3", ssrf.Private},
		{"172.16.0.1", ssrf.Private},
		{"172.31.255.255", ssrf.Private},
		{"172.32.0.1", ssrf.Public},
		{"192.168.1.1", ssrf.Private},
		{"fd12:3456::1", ssrf.Private},
		{"169.254.1.1", ssrf.LinkLocal},
		{"fe80::1%eth0", ssrf.LinkLocal},
		{"fec0::1", ssrf.LinkLocal},
		{"100.64.0.1", ssrf.CGNAT},
		{"100.127.255.254", ssrf.CGNAT},
		{"::ffff:127.0.0.1", ssrf.Mapped},
		{"::ffff:8.8.8.8", ssrf.Mapped},
		{"::127.0.0.1", ssrf.Mapped},
		{"64:ff9b::7f00:1", ssrf.Embedded},
		{"64:ff9b:1::a00:1", ssrf.Embedded},
		{"2002:7f00:1::1", ssrf.Embedded},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", ssrf.Embedded},
		{"0.0.0.0", ssrf.Unspecified},
		{"0.1.2.3", ssrf.Unspecified},
		{"::", ssrf.Unspecified},
		{"224.0.0.1", ssrf.Multicast},
		{"239.255.255.250", ssrf.Multicast},
		{"255.255.255.255", ssrf.Multicast},
		{"ff02::1", ssrf.Multicast},
		{"169.254.169.254", ssrf.Metadata},
		{"169.254.170.2", ssrf.Metadata},
		{"fd00:ec2::254", ssrf.Metadata},
		{"100.100.100.200", ssrf.Metadata},
		{"240.0.0.1", ssrf.Reserved},
		{"192.0.0.170", ssrf.Reserved},
		{"198.18.0.1", ssrf.Reserved},
	} {
		if got := ssrf.Classify(netip.MustParseAddr(c.addr)); got != c.class {
			t.Errorf("Classify(%s) = %s, want %s", c.addr, got, c.class)
		}
	}
	if got := ssrf.Classify(netip.Addr{}); got != ssrf.Unspecified {
		t.Errorf("Classify(invalid) = %s", got)
	}
}

func TestJudgePermit(t *testing.T) {
	for _, c := range []struct {
		addr  string
		local bool
		ok    bool
	}{
		{"8.8.8.8", false, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1", true, true},
		{"192.168.1.10", true, true},
		{"::ffff:10.0.0.1", true, true},
		{"169.254.169.254", true, false}, // metadata: never
		{"0.0.0.0", true, false},
		{"224.0.0.1", true, false},
		{"240.0.0.1", true, false},
	} {
		err := ssrf.Judge("h", netip.MustParseAddr(c.addr), c.local)
		if (err == nil) != c.ok {
			t.Errorf("Judge(%s, local=%v) = %v", c.addr, c.local, err)
		}
		if err != nil && !errors.Is(err, ssrf.ErrRefused) {
			t.Errorf("Judge(%s) = %v, not ErrRefused", c.addr, err)
		}
	}
}

// fakeResolver answers names from a table; a name with two answers
// alternates between them, as a rebinding attacker's server does.
type fakeResolver struct {
	answers map[string][][]netip.Addr
	n       atomic.Int64
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return as[int(r.n.Add(1)-1)%len(as)], nil
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestResolveJudgesEveryAnswer(t *testing.T) {
	r := &fakeResolver{answers: map[string][][]netip.Addr{
		"rebind.example": {addrs("203.0.113.5"), addrs("127.0.0.1")},
		"mixed.example":  {addrs("203.0.113.5", "10.0.0.1")},
		"public.example": {addrs("203.0.113.5", "2001:db8::5")},
	}}
	d := &ssrf.Dialer{Resolver: r}
	ctx := context.Background()
	if got, err := d.Resolve(ctx, "public.example", "443"); err != nil || len(got) != 2 || got[0].String() != "203.0.113.5:443" {
		t.Errorf("Resolve(public) = %v, %v", got, err)
	}
	if _, err := d.Resolve(ctx, "mixed.example", "443"); !errors.Is(err, ssrf.ErrRefused) {
		t.Errorf("Resolve(mixed) = %v, want refused", err)
	}
	if _, err := d.Resolve(ctx, "rebind.example", "443"); err != nil {
		t.Errorf("Resolve(rebind), first answer: %v", err)
	}
	if _, err := d.Resolve(ctx, "rebind.example", "443"); !errors.Is(err, ssrf.ErrRefused) {
		t.Errorf("Resolve(rebind), second answer: %v, want refused", err)
	}
	if _, err := d.Resolve(ctx, "127.0.0.1", "80"); !errors.Is(err, ssrf.ErrRefused) {
		t.Errorf("Resolve(127.0.0.1) = %v", err)
	}
	if _, err := d.Resolve(ctx, "public.example", "http"); err == nil {
		t.Error("Resolve with a port name succeeded")
	}
}

// TestDialRefusesTheMachine dials a listener of this machine: without a
// permit the socket is refused before it connects, whatever the name
// resolved to; with one it connects.
func TestDialRefusesTheMachine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	r := &fakeResolver{answers: map[string][][]netip.Addr{"loop.example": {addrs("127.0.0.1")}}}
	ctx := context.Background()

	for _, addr := range []string{ln.Addr().String(), "loop.example:" + port, "[::ffff:127.0.0.1]:" + port} {
		d := &ssrf.Dialer{Resolver: r}
		if c, err := d.DialContext(ctx, "tcp", addr); !errors.Is(err, ssrf.ErrRefused) {
			if c != nil {
				c.Close()
			}
			t.Errorf("DialContext(%s) = %v, want refused", addr, err)
		}
	}
	if _, err := (&ssrf.Dialer{}).DialContext(ctx, "udp", "8.8.8.8:53"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("udp: %v", err)
	}

	permit := &ssrf.Dialer{Resolver: r, Local: func(host, p string) bool { return host == "loop.example" && p == port }}
	c, err := permit.DialContext(ctx, "tcp", "loop.example:"+port)
	if err != nil {
		t.Fatalf("with a permit: %v", err)
	}
	c.Close()
	if _, err := permit.DialContext(ctx, "tcp", "127.0.0.1:"+port); !errors.Is(err, ssrf.ErrRefused) {
		t.Errorf("the permit opened another host: %v", err)
	}
	if n := accepted.Load(); n > 1 {
		t.Errorf("%d connections reached the listener, want 1 (the permitted one)", n)
	}
}

// TestControl checks the last line of defence alone: the address a socket
// connects to is judged even when nothing was resolved.
func TestControl(t *testing.T) {
	ctl := ssrf.Control("x", false)
	for addr, ok := range map[string]bool{
		"203.0.113.5:443": true, "127.0.0.1:80": false, "[::1]:80": false, "[fe80::1%lo]:80": false,
		"169.254.169.254:80": false, "garbage": false,
	} {
		if err := ctl("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("Control(%s) = %v", addr, err)
		}
	}
	nd := &net.Dialer{Control: ssrf.Control("x", false)}
	if _, err := nd.Dial("tcp", "127.0.0.1:9"); !errors.Is(err, ssrf.ErrRefused) {
		t.Errorf("a plain net.Dialer with Control reached loopback: %v", err)
	}
}

// TestJudgeKnowsTheMachine: each address of the machine's interfaces, and
// another address of each network they are on, is refused, whatever the
// static table says of it (this machine may sit in TEST-NET-1), and opened
// by a permit as the local network is.
func TestJudgeKnowsTheMachine(t *testing.T) {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, a := range ifAddrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(ipn.IP)
		ip = ip.Unmap()
		ones, bits := ipn.Mask.Size()
		if ip.Is4() && bits == 128 {
			ones -= 96
		}
		p, err := ip.Prefix(ones)
		if err != nil {
			t.Fatal(err)
		}
		neighbour := p.Addr().Next()
		if neighbour == ip {
			neighbour = neighbour.Next()
		}
		for _, x := range []netip.Addr{ip, neighbour} {
			if !p.Contains(x) {
				continue
			}
			checked++
			err := ssrf.Judge("name.example", x, false)
			var re *ssrf.RefusedError
			if !errors.As(err, &re) {
				t.Errorf("%s (on %s) was not refused: %v", x, p, err)
				continue
			}
			if ssrf.Classify(x) == ssrf.Public && re.Class != ssrf.Machine && re.Class != ssrf.OnLink {
				t.Errorf("%s: class %s", x, re.Class)
			}
			if err := ssrf.Judge("name.example", x, true); err != nil && re.Class.Local() {
				t.Errorf("%s with a permit: %v", x, err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("the machine has no interface address to check")
	}
	t.Logf("%d addresses of the machine and its networks checked", checked)
	if err := ssrf.Judge("name.example", netip.MustParseAddr("8.8.8.8"), false); err != nil {
		t.Errorf("a public address far from the machine: %v", err)
	}
}
