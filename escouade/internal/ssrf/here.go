package ssrf

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// hereRefresh is how long the machine's addresses are kept before they
// are read again: an interface that comes up (a VPN, a new lease) is known
// within it.
const hereRefresh = 2 * time.Second

// here are the machine's own addresses and the networks its interfaces
// are on, read from the system and refreshed: the static table cannot know
// that this machine sits in TEST-NET-1 or on a public /24 shared with
// others, and a name that resolves there reaches the machine or its
// neighbours as surely as one that resolves to 10.0.0.1.
var here hereTable

type hereTable struct {
	mu    sync.Mutex
	read  time.Time
	addrs map[netip.Addr]bool
	nets  []netip.Prefix
}

// classify returns Machine, OnLink, or Public for ip.
func (h *hereTable) classify(ip netip.Addr) Class {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); h.addrs == nil || now.Sub(h.read) >= hereRefresh {
		h.load()
		h.read = now
	}
	ip = ip.Unmap()
	if h.addrs[ip] {
		return Machine
	}
	for _, p := range h.nets {
		if p.Contains(ip) {
			return OnLink
		}
	}
	return Public
}

// load reads the interfaces' addresses. When they cannot be read, the last
// ones read are kept.
func (h *hereTable) load() {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil && h.addrs != nil {
		return
	}
	addrs := map[netip.Addr]bool{}
	var nets []netip.Prefix
	for _, a := range ifAddrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		ones, _ := ipn.Mask.Size()
		if ip.Is4() && ones > 32 {
			ones -= 96
		}
		addrs[ip] = true
		if p, err := ip.Prefix(ones); err == nil && ones > 0 {
			nets = append(nets, p)
		}
	}
	h.addrs, h.nets = addrs, nets
}
