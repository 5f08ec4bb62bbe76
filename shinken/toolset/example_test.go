package toolset_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"log"
	"net/http/httptest"
	"strings"

	"shinken.dev/go/backend/headless"
	"shinken.dev/go/shinken"
	"shinken.dev/go/shinken/client"
	"shinken.dev/go/shinken/toolset"
)

// scriptedModel stands in for a model behind the Messages API: each reply
// is the next batch of tool_use blocks of its script, written as Claude
// writes them after reading the 1024×640 screenshot of the form. An empty
// reply ends the task.
type scriptedModel struct{ script [][]toolset.ToolUse }

func (m *scriptedModel) reply(results []toolset.ToolResult) []toolset.ToolUse {
	for _, r := range results {
		if r.IsError {
			log.Fatalf("the computer failed: %s", r.Content[0].Text)
		}
	}
	if len(m.script) == 0 {
		return nil
	}
	next := m.script[0]
	m.script = m.script[1:]
	return next
}

func member(id, name, input string) toolset.ToolUse {
	return toolset.ToolUse{Type: "tool_use", ID: id, Name: name, ToolsetName: "computer", Input: json.RawMessage(input)}
}

// A complete agent loop: the toolset's definition goes to the model, each
// reply's tool calls go to Turn, and Turn's results go back, with no glue
// of the agent's own. The model here is scripted and the computer a
// headless desktop with the form app open.
func Example() {
	ctx := context.Background()
	desk := headless.New(nil) // 1280×800
	desk.Launch(ctx, "form", nil)
	rt := shinken.NewRuntime(desk, &shinken.RuntimeOptions{Token: "secret"})
	srv := httptest.NewServer(rt)
	defer srv.Close()
	defer rt.Close()
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &client.DialOptions{Token: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	computer, err := toolset.NewAnthropic(ctx, c, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tools: [%s]\n", computer.Definition())

	model := &scriptedModel{script: [][]toolset.ToolUse{
		{member("toolu_1", "screenshot", `{}`)},
		{
			member("toolu_2", "left_click", `{"coordinate": [180, 89]}`),
			member("toolu_3", "type", `{"text": "Ada Lovelace"}`),
			member("toolu_4", "left_click", `{"coordinate": [180, 143]}`),
			member("toolu_5", "type", `{"text": "ada@example.org"}`),
			member("toolu_6", "left_click", `{"coordinate": [111, 173]}`),
			member("toolu_7", "left_click", `{"coordinate": [64, 203]}`),
			member("toolu_8", "zoom", `{"region": [0, 180, 512, 260]}`),
		},
	}}
	var results []toolset.ToolResult
	for {
		uses := model.reply(results)
		if len(uses) == 0 {
			break
		}
		if results, err = computer.Turn(ctx, uses); err != nil {
			log.Fatal(err)
		}
		for i, r := range results {
			fmt.Printf("%s %s: %s\n", r.ToolUseID, uses[i].Name, describe(r))
		}
	}

	obs, err := c.Observe(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, el := range obs.Elements {
		if el.Role == "label" && strings.HasPrefix(el.Name, "Submitted") {
			fmt.Println(el.Name)
		}
	}
	// Output:
	// tools: [{"type":"computer_toolset_20260801"}]
	// toolu_1 screenshot: image 1024×640
	// toolu_2 left_click: OK
	// toolu_3 type: OK
	// toolu_4 left_click: OK
	// toolu_5 type: OK
	// toolu_6 left_click: OK
	// toolu_7 left_click: OK
	// toolu_8 zoom: image 1024×160
	// Submitted: Ada Lovelace <ada@example.org>, newsletter: yes.
}

// describe summarises a tool_result block.
func describe(r toolset.ToolResult) string {
	b := r.Content[0]
	if b.Type != "image" {
		return b.Text
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if err != nil {
		return err.Error()
	}
	img, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("image %d×%d", img.Width, img.Height)
}
