// Package toolset speaks the computer-use tools models are trained on —
// Anthropic's computer tool and toolset, OpenAI's computer tool, Gemini's
// computer use, Qwen-VL's computer_use — over an ACI session.
//
// An agent builder passes the package's tool definitions to the model,
// hands each tool call to it, and sends back what it returns, with no glue
// of their own:
//
//	a, _ := toolset.NewAnthropic(ctx, c, nil) // c: a *client.Client
//	// tools: [a.Definition()]
//	results, _ := a.Turn(ctx, toolUses) // the tool_use blocks of one response
//	// the next user message: results
//
// # Scaling
//
// The package owns the scaling. Each vendor's value fixes the model's
// screen, by default as the vendor recommends and always configurable:
// Anthropic's bound is 1024×768 (XGA); OpenAI's computer tool reads the
// screen at native resolution; Gemini speaks a 0–999 grid over screenshots
// bounded at 1440×900, Qwen-VL a 0–1000 grid over screenshots of at most
// 1280·28·28 pixels. Screenshots are delivered downscaled by the runtime to fit
// the bound, aspect ratio kept and never upscaled, and padded with black to
// exactly the bound when asked ([AnthropicOptions].Pad). Every coordinate a
// model sends is mapped back to action pixels exactly ([Scale]): the point
// lands in the screen pixels the model's pixel shows; a coordinate in the
// padding or beyond the image is refused with an error wrapping
// [ErrOutside]. cursor_position answers in the model's space, and zoom
// captures its region at the screen's native resolution, scaled to fill the
// screenshot's size: downscaled when larger, enlarged by a whole factor
// (each native pixel a square block) when smaller.
//
// # Gestures
//
// The vendors' gestures become ACI actions whose fields the runtime
// honours on every backend: held modifiers are the action's keys (held for
// the gesture, released after it even on error), buttons its button, a
// held key a key action with ms, a triple click a double_click then a click
// at the same point (so the application sees three presses within its
// multi-click time), horizontal scrolls dx, multi-point drags mouse_down,
// moves and mouse_up. Pixel scroll amounts are turned into wheel notches as
// each vendor means them.
//
// # Failures
//
// A call that cannot run — bad input, a coordinate outside the screenshot,
// an action the runtime refuses — answers with an error result in the
// vendor's shape, and in a batch (an Anthropic turn, an OpenAI actions[]
// list) nothing after the failure runs: Anthropic's later calls are
// answered [NotExecuted], as Anthropic asks.
package toolset
