// Package ssrf keeps requests made on behalf of plugins away from the
// machine and its local network: it judges the addresses a name resolves
// to, and dials only an address it judged, checking it again in the
// dialer's Control, on the socket about to connect, so that what was
// checked is what is dialled.
//
// Names are never trusted: a name that answers a public address once and a
// private one the next time (DNS rebinding) is judged on each answer, at
// each dial. Beside its static table of the networks no plugin reaches,
// the package knows the machine's own addresses and on-link networks, read
// from its interfaces and refreshed, so that a machine whose network the
// table calls public (TEST-NET-1 in a container, a public /24) is kept
// out as well.
package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// A Class is the kind of network an address belongs to.
type Class uint8

// Classes of addresses. Public is the only one a dial reaches without a
// permit; a permit (Dialer.Local) opens the local ones, never the others.
const (
	Public      Class = iota
	Loopback          // 127.0.0.0/8, ::1: the machine itself
	Private           // 10/8, 172.16/12, 192.168/16, fc00::/7
	LinkLocal         // 169.254/16, fe80::/10 (and site-local fec0::/10)
	CGNAT             // 100.64.0.0/10: a carrier's shared space, often a VPN's
	Mapped            // ::ffff:0:0/96 and ::/96: an IPv4 address in IPv6 clothes
	Embedded          // NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32): an IPv4 address inside
	Unspecified       // 0.0.0.0, ::, and 0.0.0.0/8: "this host"
	Multicast         // 224/4, ff00::/8, and the broadcast 255.255.255.255
	Metadata          // cloud metadata services: 169.254.169.254, 169.254.170.2, fd00:ec2::254, 100.100.100.200
	Reserved          // 240/4, 192.0.0.0/24, 198.18.0.0/15: never a server on the internet
	Machine           // an address of one of this machine's interfaces
	OnLink            // in a network one of this machine's interfaces is on
)

var classNames = [...]string{
	Public:      "public",
	Loopback:    "loopback",
	Private:     "private",
	LinkLocal:   "link-local",
	CGNAT:       "CGNAT",
	Mapped:      "IPv4-mapped IPv6",
	Embedded:    "IPv4 embedded in IPv6 (NAT64, 6to4, Teredo)",
	Unspecified: "unspecified",
	Multicast:   "multicast or broadcast",
	Metadata:    "cloud metadata",
	Reserved:    "reserved",
	Machine:     "this machine's own",
	OnLink:      "on-link (a network this machine is on)",
}

// String names the class for a refusal's message.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Local reports whether the class is the machine or its local network:
// what a permit may open. Unspecified, multicast, metadata and reserved
// addresses are never opened.
func (c Class) Local() bool {
	switch c {
	case Loopback, Private, LinkLocal, CGNAT, Mapped, Embedded, Machine, OnLink:
		return true
	}
	return false
}

func mustPrefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// The tables, most specific first: metadata addresses are link-local or
// private too, and must be named as what they are.
var table = []struct {
	class    Class
	prefixes []netip.Prefix
}{
	{Metadata, mustPrefixes("169.254.169.254/32", "169.254.170.2/32", "169.254.170.23/32", "fd00:ec2::254/128", "fd00:ec2::23/128", "100.100.100.200/32")},
	{Unspecified, mustPrefixes("0.0.0.0/8", "::/128")},
	{Loopback, mustPrefixes("127.0.0.0/8", "::1/128")},
	{Mapped, mustPrefixes("::ffff:0:0/96", "::/96", "::ffff:0:0:0/96")},
	{Embedded, mustPrefixes("64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32")},
	{Private, mustPrefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")},
	{LinkLocal, mustPrefixes("169.254.0.0/16", "fe80::/10", "fec0::/10")},
	{CGNAT, mustPrefixes("100.64.0.0/10")},
	{Multicast, mustPrefixes("224.0.0.0/4", "255.255.255.255/32", "ff00::/8")},
	{Reserved, mustPrefixes("240.0.0.0/4", "192.0.0.0/24", "198.18.0.0/15", "100::/64")},
}

// Classify tells the class of ip by the static table alone. An invalid
// address is Unspecified. Judge also knows the machine's own addresses and
// networks (Machine, OnLink).
func Classify(ip netip.Addr) Class {
	if !ip.IsValid() {
		return Unspecified
	}
	ip = ip.WithZone("")
	for _, row := range table {
		for _, p := range row.prefixes {
			if p.Contains(ip) {
				return row.class
			}
		}
	}
	return Public
}

// ErrRefused is wrapped by every refusal: errors.Is(err, ssrf.ErrRefused).
var ErrRefused = errors.New("ssrf: refused")

// A RefusedError is a dial refused: the host asked, the address it came
// to, and the address's class.
type RefusedError struct {
	Host  string     // the name or address asked for
	Addr  netip.Addr // the address refused
	Class Class
}

// Error says which address was refused and why.
func (e *RefusedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("ssrf: %s resolves to %s, a %s address: an address of the machine or of the local network is never reached", e.Host, e.Addr, e.Class)
	}
	return fmt.Sprintf("ssrf: %s is a %s address: an address of the machine or of the local network is never reached", e.Addr, e.Class)
}

// Unwrap makes the error ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Judge returns nil when ip may be reached, and a *RefusedError otherwise.
// An address the static table calls public is judged again against the
// machine's own interface addresses and the networks they are on (read
// from the system, refreshed every 2 s): it is then Machine or OnLink.
// local is a permit: the machine and the local network are then allowed,
// but never the classes that no service lives at.
func Judge(host string, ip netip.Addr, local bool) error {
	c := Classify(ip)
	if c == Public {
		c = here.classify(ip.WithZone(""))
	}
	if c == Public || (local && c.Local()) {
		return nil
	}
	return &RefusedError{Host: host, Addr: ip.WithZone(""), Class: c}
}

// A Resolver looks names up. *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// A Dialer dials TCP connections only to addresses it judged. Its zero
// value is ready: net.DefaultResolver, no permit, a 30 s connect timeout.
type Dialer struct {
	// Resolver looks names up; nil means net.DefaultResolver. Whatever it
	// answers is judged.
	Resolver Resolver
	// Local is the permit: it reports whether host and port (as asked,
	// before resolution) may reach the machine and the local network. nil
	// means never.
	Local func(host, port string) bool
	// Timeout bounds each connection attempt; 0 means 30 s.
	Timeout time.Duration
}

// Resolve resolves host and judges every address it gets: one refused
// address refuses the host, since a name that answers both public and
// private addresses is one an attacker chose. An address given as host is
// judged as it is.
func (d *Dialer) Resolve(ctx context.Context, host, port string) ([]netip.AddrPort, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("ssrf: bad port %q", port)
	}
	local := d.Local != nil && d.Local(host, port)
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		r := d.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		if err := Judge(host, a, local); err != nil {
			return nil, err
		}
		out = append(out, netip.AddrPortFrom(a.WithZone(""), uint16(p)))
	}
	return out, nil
}

// DialContext dials address (host:port) over tcp, tcp4 or tcp6: it
// resolves and judges the host, then dials the addresses judged, one after
// the other, each checked again on its socket before it connects.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("ssrf: network %s: %w", network, errors.ErrUnsupported)
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := d.Resolve(ctx, host, port)
	if err != nil {
		return nil, err
	}
	local := d.Local != nil && d.Local(host, port)
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	nd := &net.Dialer{Timeout: timeout, Control: Control(host, local)}
	var first error
	for _, ap := range addrs {
		c, err := nd.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if errors.Is(err, ErrRefused) || ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// Control returns a net.Dialer Control function that judges the address a
// socket is about to connect to, with the permit local: a refused address
// fails the dial before a packet leaves.
func Control(host string, local bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: the address %q cannot be judged", ErrRefused, address)
		}
		return Judge(host, ap.Addr(), local)
	}
}
