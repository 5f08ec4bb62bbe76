package session_test

import (
	"context"
	"fmt"
	"log"

	"shinken.dev/go/backend/osexec"
	"shinken.dev/go/backend/x11"
	"shinken.dev/go/backend/x11/session"
	"shinken.dev/go/shinken"
)

// A bespoke daemon's desktop: start the session, open the x11 backend on
// it with the accessibility tree, and serve it.
func Example() {
	ctx := context.Background()
	s, err := session.Start(ctx, &session.Options{Width: 1920, Height: 1080, Apps: [][]string{{"xterm"}}})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close() // takes every process of the desktop down
	b, err := x11.Open(ctx, &x11.Options{Display: s.Display, Xauthority: s.Xauthority, SessionBus: s.SessionBus, LaunchEnv: s.AppEnv()})
	if err != nil {
		log.Fatal(err)
	}
	desk := b.WithAccessibility(nil)
	defer desk.Close()
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret", Executor: osexec.New(nil)})
	defer rt.Close()
	// Serve rt (an http.Handler); a readiness probe asks s.Check(ctx).
	fmt.Println(s.Check(ctx) == nil)
}
