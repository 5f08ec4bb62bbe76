package atspi

import "context"

// watchedSignals are the org.a11y.atspi.Event.Object members that count as
// a change of the tree.
var watchedSignals = map[string]bool{
	"ChildrenChanged": true,
	"StateChanged":    true,
	"PropertyChange":  true,
	"BoundsChanged":   true,
	"TextChanged":     true,
}

// notify wakes every watcher without ever blocking: a watcher whose
// channel is full already has a change to read.
func (c *Client) notify() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	for ch := range c.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Watch implements [shinken.ChangeWatcher]: the channel receives a value
// after AT-SPI reports children, states, properties, bounds or text
// changing in any application. Sends are coalesced; the channel is closed
// when ctx is done or the Client is closed.
func (c *Client) Watch(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.watchMu.Lock()
	if c.closed() {
		c.watchMu.Unlock()
		close(ch)
		return ch
	}
	c.watchers[ch] = struct{}{}
	c.wg.Add(1)
	c.watchMu.Unlock()
	go func() {
		defer c.wg.Done()
		select {
		case <-ctx.Done():
		case <-c.done:
		}
		c.watchMu.Lock()
		delete(c.watchers, ch)
		c.watchMu.Unlock()
		close(ch)
	}()
	return ch
}
