//go:build linux

package osexec_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/internal/agentusertest"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
)

// BenchmarkSpawnTrue measures the buffered round trip of `true`: Start,
// Collect (which waits). The runtime adds its own costs on top; the issue's
// target for the whole is a p50 of 3 ms.
func BenchmarkSpawnTrue(b *testing.B) {
	benchSpawnTrue(b, osexec.New(nil))
}

// BenchmarkSpawnTrueUncontained is BenchmarkSpawnTrue without a pid
// namespace and its init (KeepBackground gives them up): the cost of
// containment is the ratio of the two.
func BenchmarkSpawnTrueUncontained(b *testing.B) {
	benchSpawnTrue(b, osexec.New(&osexec.Options{KeepBackground: true}))
}

func benchSpawnTrue(b *testing.B, e *osexec.Executor) {
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		p, err := e.Start(ctx, aci.ExecRequest{Argv: []string{"true"}})
		if err != nil {
			b.Fatal(err)
		}
		out, err := shinken.Collect(p, 1<<20)
		if err != nil || out.Status.Code != 0 {
			b.Fatalf("%+v, %v", out.Status, err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkStreamZero measures streamed throughput through Next of
// `head -c 500M /dev/zero`. The target end to end over the wire is
// 300 MB/s.
func BenchmarkStreamZero(b *testing.B) {
	const total = 500 << 20
	e := osexec.New(nil)
	ctx := context.Background()
	b.SetBytes(total)
	for b.Loop() {
		p, err := e.Start(ctx, aci.ExecRequest{Argv: []string{"head", "-c", "500M", "/dev/zero"}})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			c, err := p.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(c.Data)
		}
		if st, err := p.Wait(); err != nil || st.Code != 0 || n != total {
			b.Fatalf("%d bytes, %+v, %v", n, st, err)
		}
	}
}

// BenchmarkSpawnUser measures the buffered round trip of `true` run as the
// runtime's own user (the reference) and as another user (Options.User:
// setgroups, setgid and setuid in the child, HOME and the working folder),
// in the same run.
func BenchmarkSpawnUser(b *testing.B) {
	u := agentusertest.Need(b)
	for _, bc := range []struct {
		name string
		user *osexec.User
	}{
		{"own", nil},
		{"agent", &osexec.User{Name: u.Name, UID: u.UID, GID: u.GID, Groups: u.Groups, Home: u.Home}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := osexec.New(&osexec.Options{User: bc.user})
			ctx := context.Background()
			for b.Loop() {
				p, err := e.Start(ctx, aci.ExecRequest{Argv: []string{"true"}})
				if err != nil {
					b.Fatal(err)
				}
				if out, err := shinken.Collect(p, 1<<20); err != nil || out.Status.Code != 0 {
					b.Fatalf("%+v, %v", out.Status, err)
				}
			}
		})
	}
}
