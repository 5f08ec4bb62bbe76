package shinken

import (
	"errors"
	"fmt"
	"reflect"
)

// capabilities are the interfaces the Runtime looks for in a backend.
var capabilities = []reflect.Type{
	reflect.TypeFor[Capturer](),
	reflect.TypeFor[Injector](),
	reflect.TypeFor[A11y](),
	reflect.TypeFor[ChangeWatcher](),
	reflect.TypeFor[Executor](),
	reflect.TypeFor[Clipboard](),
	reflect.TypeFor[Windows](),
	reflect.TypeFor[Launcher](),
	reflect.TypeFor[PointerReporter](),
	reflect.TypeFor[PlatformReporter](),
	reflect.TypeFor[DamageTracker](),
	reflect.TypeFor[Settler](),
}

// CheckBackend reports the capabilities b almost has (method names right,
// signature wrong: the Runtime would not find them), nil for none.
func CheckBackend(b Backend) error {
	if b == nil {
		return nil
	}
	t := reflect.TypeOf(b)
	var errs []error
	for _, iface := range capabilities {
		if t.Implements(iface) {
			continue
		}
		for i := range iface.NumMethod() {
			want := iface.Method(i)
			got, ok := t.MethodByName(want.Name)
			if !ok || sameSignature(got.Type, want.Type) {
				continue
			}
			// got.Type has the receiver as its first argument.
			errs = append(errs, fmt.Errorf("shinken: %v has %s%s, not %s.%s%s: it is no %s",
				t, want.Name, signature(got.Type, 1), iface.Name(), want.Name, signature(want.Type, 0), iface.Name()))
		}
	}
	return errors.Join(errs...)
}

// signature renders a func type's parameters and results, skipping the
// first skip parameters (the receiver of a method value's type).
func signature(f reflect.Type, skip int) string {
	s := "("
	for i := skip; i < f.NumIn(); i++ {
		if i > skip {
			s += ", "
		}
		s += f.In(i).String()
	}
	s += ")"
	switch f.NumOut() {
	case 0:
	case 1:
		s += " " + f.Out(0).String()
	default:
		s += " ("
		for i := range f.NumOut() {
			if i > 0 {
				s += ", "
			}
			s += f.Out(i).String()
		}
		s += ")"
	}
	return s
}

// sameSignature reports whether method (whose first parameter is its
// receiver) has the parameters and results of f.
func sameSignature(method, f reflect.Type) bool {
	if method.NumIn()-1 != f.NumIn() || method.NumOut() != f.NumOut() || method.IsVariadic() != f.IsVariadic() {
		return false
	}
	for i := range f.NumIn() {
		if method.In(i+1) != f.In(i) {
			return false
		}
	}
	for i := range f.NumOut() {
		if method.Out(i) != f.Out(i) {
			return false
		}
	}
	return true
}
