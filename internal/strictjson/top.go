package strictjson

// TopString returns the string value of key in the top-level object of data,
// skipping everything else without building it. It reports false when data
// is not an object, key is absent, or its value is not a string. Keys match
// exactly (case-sensitively); the first occurrence wins.
//
// It reads the text by the scanner's rules for strings, numbers and
// literals but, unlike every decoder of this package, with no depth bound
// (it keeps a stack of the open containers instead of recursing), no key
// bound and no check of duplicate keys: a message whose other fields are
// deeply nested or repeat a key still yields its call_id, and gets an
// answer in-band. A lone surrogate reads as U+FFFD, as the ACI's clients
// mean it.
func TopString(data []byte, key string) (string, bool) {
	i, ok := seekTop(data, key)
	if !ok || i >= len(data) || data[i] != '"' {
		return "", false
	}
	end, esc, err := scanString(data, i, true)
	if err != nil {
		return "", false
	}
	if esc {
		return string(unescape(data[i+1 : end-1])), true
	}
	return string(data[i+1 : end-1]), true
}

// TopRaw returns the raw bytes of the value of key in the top-level object
// of data, checked for syntax only, like TopString.
func TopRaw(data []byte, key string) ([]byte, bool) {
	i, ok := seekTop(data, key)
	if !ok {
		return nil, false
	}
	end, ok := skipLoose(data, i)
	if !ok {
		return nil, false
	}
	return data[i:end], true
}

// seekTop returns the offset of the value of key in the top-level object
// of data.
func seekTop(data []byte, key string) (int, bool) {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return 0, false
	}
	for {
		k, next, ok := looseKey(data, i)
		if !ok {
			return 0, false
		}
		i = SkipSpace(data, next)
		if string(k) == key {
			return i, true
		}
		if i, ok = skipLoose(data, i); !ok {
			return 0, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) || data[i] != ',' {
			return 0, false
		}
		i = SkipSpace(data, i+1)
	}
}

// looseKey reads `"key":` at i and returns the key, unescaped, and the
// offset past the colon.
func looseKey(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	end, esc, err := scanString(data, i, true)
	if err != nil {
		return nil, 0, false
	}
	k := data[i+1 : end-1]
	if esc {
		k = unescape(k)
	}
	j := SkipSpace(data, end)
	if j >= len(data) || data[j] != ':' {
		return nil, 0, false
	}
	return k, j + 1, true
}

// skipLoose skips the value at i checking only its syntax, and returns the
// offset past it.
func skipLoose(data []byte, i int) (int, bool) {
	var open []byte // the closing bracket of each open container
	for {
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		// A value.
		var err error
		switch c := data[i]; {
		case c == '{' || c == '[':
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			i = SkipSpace(data, i+1)
			if i < len(data) && data[i] == closing {
				i++
				break
			}
			open = append(open, closing)
			if closing == '}' {
				var ok bool
				if _, i, ok = looseKey(data, i); !ok {
					return i, false
				}
			}
			continue
		case c == '"':
			i, _, err = scanString(data, i, true)
		case c == 't':
			i, err = literal(data, i, "true")
		case c == 'f':
			i, err = literal(data, i, "false")
		case c == 'n':
			i, err = literal(data, i, "null")
		default:
			i, err = scanNumber(data, i)
		}
		if err != nil {
			return i, false
		}
		// After a value: close containers, or go on to the next member.
		for len(open) > 0 {
			i = SkipSpace(data, i)
			if i >= len(data) {
				return i, false
			}
			top := open[len(open)-1]
			if data[i] == top {
				i++
				open = open[:len(open)-1]
				continue
			}
			if data[i] != ',' {
				return i, false
			}
			i++
			if top == '}' {
				var ok bool
				if _, i, ok = looseKey(data, SkipSpace(data, i)); !ok {
					return i, false
				}
			}
			break
		}
		if len(open) == 0 {
			return i, true
		}
	}
}
