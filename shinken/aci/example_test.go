package aci_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/aci"
	"shinken.dev/go/shinken/client"
)

// Errors carry the wire code; act on it with errors.Is.
func ExampleErrStaleElementRef() {
	ctx := context.Background()
	rt := shinken.NewRuntime(headless.New(nil), &shinken.RuntimeOptions{Token: "t"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "t"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	err = c.Click(ctx, aci.Ref("e42"))
	fmt.Println(err)
	var e *aci.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code == aci.CodeStaleElementRef)
	}
	// Output:
	// stale_element_ref: e42 is gone or was never observed in this session: observe again
	// true
}
