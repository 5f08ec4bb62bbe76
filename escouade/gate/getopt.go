package gate

import "strings"

// longOpts lists a program's long options: "name" takes no value,
// "name=" one (--name=v or --name v), "name=?" one only after an =.
type longOpts map[string]byte

const (
	noValue = iota
	value
	optionalValue
)

func longs(spec string) longOpts {
	m := longOpts{}
	for _, w := range strings.Fields(spec) {
		switch {
		case strings.HasSuffix(w, "=?"):
			m[strings.TrimSuffix(w, "=?")] = optionalValue
		case strings.HasSuffix(w, "="):
			m[strings.TrimSuffix(w, "=")] = value
		default:
			m[w] = noValue
		}
	}
	return m
}

// match returns the long option name abbreviates, as GNU getopt accepts
// any unambiguous prefix (env --split=… is --split-string).
func (l longOpts) match(name string) (string, bool) {
	if _, ok := l[name]; ok {
		return name, true
	}
	found := ""
	for full := range l {
		if name != "" && strings.HasPrefix(full, name) {
			if found != "" {
				return "", false // ambiguous: the program refuses it
			}
			found = full
		}
	}
	return found, found != ""
}

// getopt reads the options at the start of args as GNU getopt does for a
// program that stops at its first operand (env, nice, sudo…): short
// lists the letters, each followed by ':' when it takes a value. opt,
// when set, is told each option (its long name, or its letter) and its
// value, and returns false to stop. It returns the operands, and false
// when an option is unknown, ambiguous, lacks its value or was stopped:
// then the gate does not know what the program runs.
func getopt(args []string, short string, long longOpts, opt func(name, value string) bool) ([]string, bool) {
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return args[1:], true
		}
		if len(a) < 2 || a[0] != '-' {
			return args, true
		}
		args = args[1:]
		if strings.HasPrefix(a, "--") {
			name, v, hasValue := strings.Cut(a[2:], "=")
			full, ok := long.match(name)
			if !ok {
				return nil, false
			}
			switch long[full] {
			case value:
				if !hasValue {
					if len(args) == 0 {
						return nil, false
					}
					v, args = args[0], args[1:]
				}
			case noValue:
				if hasValue {
					return nil, false
				}
			}
			if opt != nil && !opt(full, v) {
				return nil, false
			}
			continue
		}
		for i := 1; i < len(a); i++ {
			j := strings.IndexByte(short, a[i])
			if j < 0 || a[i] == ':' {
				return nil, false
			}
			if j+1 < len(short) && short[j+1] == ':' {
				v := a[i+1:]
				if v == "" {
					if len(args) == 0 {
						return nil, false
					}
					v, args = args[0], args[1:]
				}
				if opt != nil && !opt(a[i:i+1], v) {
					return nil, false
				}
				break
			}
			if opt != nil && !opt(a[i:i+1], "") {
				return nil, false
			}
		}
	}
	return args, true
}
