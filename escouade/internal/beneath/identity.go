package beneath

import "sync"

// A Set holds the identities (device, inode) of folders that no open
// walks through or opens, whatever name they have when it walks: a
// folder a rule names (a private project's) keeps its identity when
// another process renames it, or exchanges it with a folder a plugin may
// read (renameat2 RENAME_EXCHANGE), where its path does not. A refused
// place's identity is the one it had when the set first saw it, kept
// whatever is exchanged with it after: the folder a plugin may read stays
// readable under its own name, the refused one stays refused under any.
// Safe for concurrent use; the zero Set is empty and ready.
type Set struct {
	mu      sync.Mutex
	ids     map[identity]bool
	places  map[string]bool  // the places whose first identity is held
	scanned map[scanKey]bool // folders whose hidden entries were added, as they were
}

type identity struct{ dev, ino uint64 }

// A Key is a file's identity: its device and inode numbers.
type Key struct{ Dev, Ino uint64 }

// Firsts keeps the identity each path had when first seen, whatever is
// exchanged with it after. Safe for concurrent use; the zero Firsts is
// empty and ready.
type Firsts struct {
	mu  sync.Mutex
	ids map[string]Key
}

// First returns the identity path had when first given, now is its
// identity now (kept when path is new).
func (f *Firsts) First(path string, now Key) Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.ids[path]; ok {
		return k
	}
	if f.ids == nil {
		f.ids = map[string]Key{}
	}
	f.ids[path] = now
	return now
}

// scanKey is a folder as it was when scanned: a rename in it changes its
// modification time.
type scanKey struct {
	id         identity
	sec, nsec  int64
	csec, cnse int64
}

// AddFirst adds the identity of the folder at place (a path, or a name in
// a folder), unless the set holds one for place already: the first is
// kept.
func (s *Set) AddFirst(place string, dev, ino uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.places[place] {
		return
	}
	if s.ids == nil {
		s.ids, s.places = map[identity]bool{}, map[string]bool{}
	}
	s.places[place] = true
	s.ids[identity{dev, ino}] = true
}

// Has reports whether the set holds the identity.
func (s *Set) Has(dev, ino uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[identity{dev, ino}]
}

// needsScan reports whether the folder k was not scanned as it is, and
// marks it scanned.
func (s *Set) needsScan(k scanKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scanned == nil {
		s.scanned = map[scanKey]bool{}
	}
	if s.scanned[k] {
		return false
	}
	s.scanned[k] = true
	return true
}
