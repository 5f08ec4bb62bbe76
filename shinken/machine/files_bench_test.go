package machine_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/machine"
)

// benchFile is a file of n bytes of text, so that cat's output is valid
// UTF-8, as exec's output must be.
func benchFile(b *testing.B, n int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte("0123456789abcdef"), n/16), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkReadChunk reads one MaxChunk chunk with ReadFileAt: one exec of
// the read plumbing, its answer base64. The reference is
// BenchmarkCatChunk.
func BenchmarkReadChunk(b *testing.B) {
	c, _ := execRig(b)
	p := benchFile(b, machine.MaxChunk)
	b.SetBytes(machine.MaxChunk)
	for b.Loop() {
		data, _, err := c.ReadFileAt(b.Context(), p, 0, machine.MaxChunk)
		if err != nil || len(data) != machine.MaxChunk {
			b.Fatal(len(data), err)
		}
	}
}

// BenchmarkCatChunk is the reference: exec of cat of a MaxChunk text file,
// its output as it is.
func BenchmarkCatChunk(b *testing.B) {
	c, _ := execRig(b)
	p := benchFile(b, machine.MaxChunk)
	b.SetBytes(machine.MaxChunk)
	for b.Loop() {
		res, err := c.Exec(b.Context(), &aci.ExecRequest{Argv: []string{"cat", p}})
		if err != nil || len(res.Stdout) != machine.MaxChunk {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteChunk writes one 2 MiB chunk with WriteFile (base64 on the
// exec's stdin). The reference is BenchmarkCatWriteChunk.
func BenchmarkWriteChunk(b *testing.B) {
	c, _ := execRig(b)
	p := filepath.Join(b.TempDir(), "w")
	data := bytes.Repeat([]byte("0123456789abcdef"), (2<<20)/16)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := c.WriteFile(b.Context(), p, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatWriteChunk is the reference: exec of sh -c 'cat > file' with
// the same 2 MiB of text on stdin, as it is.
func BenchmarkCatWriteChunk(b *testing.B) {
	c, _ := execRig(b)
	p := filepath.Join(b.TempDir(), "w")
	in := string(bytes.Repeat([]byte("0123456789abcdef"), (2<<20)/16))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		res, err := c.Exec(b.Context(), &aci.ExecRequest{Argv: []string{"sh", "-c", `cat > "$1"`, "sh", p}, Stdin: &in})
		if err != nil || *res.ExitCode != 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecTrue is an exec's round trip with no output.
func BenchmarkExecTrue(b *testing.B) {
	c, _ := execRig(b)
	for b.Loop() {
		if _, err := c.Exec(b.Context(), &aci.ExecRequest{Argv: []string{"true"}}); err != nil {
			b.Fatal(err)
		}
	}
}
