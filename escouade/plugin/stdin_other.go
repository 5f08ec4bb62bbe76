//go:build !unix

package plugin

import "io"

func pollable(in io.Reader) (io.Reader, func()) { return in, func() {} }

func pollableOut(out io.Writer) (io.Writer, func()) { return out, func() {} }
