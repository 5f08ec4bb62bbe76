// Command probeload is the outside side of BenchmarkProbesFromOutside: a
// process of its own, as a kubelet's prober or a fleet of agents is.
//
//	probeload -base http://127.0.0.1:PORT -token T -clients 200
//
// dials 200 ACI clients that each loop a screenshot, an observe and a
// click, writes "looping" once every client has done one round, and runs
// until its stdin closes, then writes to stderr how many rounds the
// clients made from then on.
//
//	probeload -base http://127.0.0.1:PORT -probes 2000
//
// GETs /readyz and /healthz in turn, each on a connection kept open as a
// kubelet's is, and writes each probe's latency in microseconds, a line
// each; any answer but 200 ends it with an error.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

func main() {
	base := flag.String("base", "", "the daemon's http://host:port")
	token := flag.String("token", "", "the daemon's token (-clients)")
	clients := flag.Int("clients", 0, "ACI clients to loop until stdin closes")
	probes := flag.Int("probes", 0, "probes to make")
	flag.Parse()
	var err error
	switch {
	case *base == "":
		err = fmt.Errorf("no -base")
	case *clients > 0:
		err = load(*base, *token, *clients)
	case *probes > 0:
		err = probe(*base, *probes)
	default:
		err = fmt.Errorf("neither -clients nor -probes")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probeload:", err)
		os.Exit(1)
	}
}

func load(base, token string, n int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := "ws" + strings.TrimPrefix(base, "http") + "/aci"
	dial := func() (*client.Client, error) { return client.Dial(ctx, url, &client.DialOptions{Token: token}) }
	var wg sync.WaitGroup
	var first sync.WaitGroup
	first.Add(n)
	var mu sync.Mutex
	lost, rounds := 0, 0
	var began time.Time
	for range n {
		c, err := dial()
		if err != nil {
			return err
		}
		wg.Go(func() {
			done := false
			defer func() {
				c.Close()
				if !done {
					first.Done() // gone before its first round: not waited for
				}
			}()
			for ctx.Err() == nil {
				err := round(ctx, c)
				if err != nil && ctx.Err() == nil {
					// A connection the daemon dropped under the load is
					// counted, and made again: the load goes on.
					mu.Lock()
					lost++
					mu.Unlock()
					fmt.Fprintln(os.Stderr, "probeload: a client:", err)
					c.Close()
					if c, err = dial(); err != nil {
						return
					}
					continue
				}
				if !done {
					first.Done()
					done = true
				}
				mu.Lock()
				rounds++
				mu.Unlock()
			}
		})
	}
	looping := make(chan struct{})
	go func() { first.Wait(); close(looping) }()
	stdin := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case <-looping:
		mu.Lock()
		rounds, began = 0, time.Now()
		mu.Unlock()
		fmt.Println("looping")
		<-stdin
	case <-stdin:
	}
	cancel()
	wg.Wait()
	fmt.Fprintf(os.Stderr, "probeload: %d connections lost and made again\n", lost)
	if !began.IsZero() {
		took := time.Since(began)
		fmt.Fprintf(os.Stderr, "probeload: %d rounds in %v while probed, %.1f a second\n", rounds, took.Round(time.Millisecond), float64(rounds)/took.Seconds())
	}
	return nil
}

// round is one agent's iteration: a screenshot, an observe, a click.
func round(ctx context.Context, c *client.Client) error {
	if _, err := c.Screenshot(ctx, nil); err != nil {
		return err
	}
	if _, err := c.Observe(ctx, nil); err != nil {
		return err
	}
	return c.Click(ctx, aci.Px(400, 300))
}

func probe(base string, n int) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	paths := []string{"/readyz", "/healthz"}
	for i := range n {
		t0 := time.Now()
		resp, err := hc.Get(base + paths[i%2])
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", paths[i%2], resp.Status)
		}
		fmt.Fprintln(out, took.Microseconds())
	}
	return nil
}
