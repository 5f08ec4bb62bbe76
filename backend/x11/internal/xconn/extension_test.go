package xconn_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xfixes"
	"github.com/jezek/xgb/xproto"

	"shinken.dev/go/backend/x11/internal/xconn"
	"shinken.dev/go/internal/xvfb/xvfbtest"
)

func connect(t *testing.T, display, xauthority string) *xgb.Conn {
	t.Helper()
	d, err := xconn.ParseDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := xconn.Connect(ctx, d, xauthority, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestExtensionsWhileEventsFlow initialises extensions on new
// connections while another connection decodes DAMAGE events: the
// extension packages' own Init functions write xgb's process-wide decoder
// tables that every reader reads without a lock (a data race under
// -race); Init writes them once per process.
func TestExtensionsWhileEventsFlow(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	watcher := connect(t, srv.Display, srv.Xauthority)
	if err := xconn.Init(watcher, xconn.Damage); err != nil {
		t.Fatal(err)
	}
	if _, err := damage.QueryVersion(watcher, 1, 1).Reply(); err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(watcher).DefaultScreen(watcher).Root
	id, err := damage.NewDamageId(watcher)
	if err != nil {
		t.Fatal(err)
	}
	if err := damage.CreateChecked(watcher, id, xproto.Drawable(root), damage.ReportLevelRawRectangles).Check(); err != nil {
		t.Fatal(err)
	}

	// A painter changes the root window over and over: each change is a
	// DAMAGE event the watcher's reader decodes through the tables.
	painter := connect(t, srv.Display, srv.Xauthority)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := uint32(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			xproto.ChangeWindowAttributesChecked(painter, root, xproto.CwBackPixel, []uint32{i & 0xffffff}).Check()
			xproto.ClearAreaChecked(painter, false, root, 0, 0, 0, 0).Check()
		}
	}()
	events := 0
	go func() {
		defer wg.Done()
		for {
			ev, err := watcher.WaitForEvent()
			if ev == nil && err == nil {
				return // the connection closed
			}
			if _, ok := ev.(damage.NotifyEvent); ok {
				events++
			}
		}
	}()

	for range 20 {
		c := connect(t, srv.Display, srv.Xauthority)
		for _, name := range []string{xconn.Damage, xconn.SHM, xconn.XFixes, xconn.XTest} {
			if err := xconn.Init(c, name); err != nil {
				t.Fatalf("Init(%s): %v", name, err)
			}
		}
		if _, err := xfixes.QueryVersion(c, 5, 0).Reply(); err != nil {
			t.Fatalf("XFIXES is not usable after Init: %v", err)
		}
		c.Close()
	}
	close(stop)
	// The painter's last request is checked, so the server has seen every
	// change before the watcher's connection closes.
	painterDone := make(chan struct{})
	go func() { wg.Wait(); close(painterDone) }()
	watcher.Close()
	<-painterDone
	if events == 0 {
		t.Error("the watcher decoded no DAMAGE event: nothing read the tables while extensions were initialised")
	}
}

// TestExtensionOtherNumbering refuses an extension that this process
// decodes with other event numbers (another server's), rather than
// rewriting the tables under the readers.
func TestExtensionOtherNumbering(t *testing.T) {
	srv := xvfbtest.Start(t, nil)
	c := connect(t, srv.Display, srv.Xauthority)
	restore := xconn.SetRegistered(xconn.XFixes, 200, 200)
	defer restore()
	if err := xconn.Init(c, xconn.XFixes); err == nil {
		t.Fatal("Init took an extension numbered unlike the process's tables")
	}
	if err := xconn.Init(c, "NO-SUCH-EXTENSION"); err == nil {
		t.Fatal("Init took an extension the server lacks")
	}
}
