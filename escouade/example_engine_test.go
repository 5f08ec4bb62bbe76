package escouade_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/js"
	"shinken.dev/go/escouade/protocol"
)

// A program that starts run.js or run.wasm plugins hands their engines to
// its Host and to EngineMain, which it calls first thing in main: each
// plugin's engine is the program, started again. Here TestMain has called
// it already.
func ExampleEngineMain() {
	escouade.EngineMain(js.Language()) // in main, before anything else

	dir, err := os.MkdirTemp("", "guard-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"id":"guard","version":"1.0.0","protocolVersion":1,
		"run":{"js":"main.js"},"permissions":{"decide":true}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "main.js"), []byte(`escouade.onDecide((p) =>
		p.request.kind === "rm" ? { decision: "deny", message: "no rm" } : { decision: "allow" });`), 0o644)

	ctx := context.Background()
	h := escouade.New(&escouade.Options{
		Languages: []escouade.Language{js.Language()},
		Secrets:   escouade.SecretMap{},
		Journal:   slog.DiscardHandler,
		Projects:  escouade.ProjectMap{"p": {Project: protocol.Project{ID: "p", Name: "P"}}},
	})
	defer h.Close(ctx)
	if _, err := h.Start(ctx, dir); err != nil { // the script runs in a child process
		fmt.Println(err)
		return
	}
	d, _ := h.Decide(ctx, protocol.PermissionRequest{ID: "1", Kind: "rm"}, escouade.About{Project: "p"})
	fmt.Println(d.Verdict, d.Message)
	// Output: deny no rm
}
