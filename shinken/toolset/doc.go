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
// [ErrOutside]. Coordinates may be any JSON number, as the vendors' types
// allow: they are rounded to the nearest pixel. cursor_position answers in
// the model's space ("X=512,Y=384", as Anthropic's reference agent writes
// it), and zoom captures its region at the screen's native resolution,
// scaled to fill the model's screen with the region's aspect ratio kept:
// downscaled when larger, enlarged (Catmull-Rom) when smaller.
//
// # Keys
//
// Key names are read as each vendor writes them, case-insensitively
// ("CTRL+S", "Return", "ESCAPE", "page_down", "kp_enter"); a letter in a
// combination names its key and never adds Shift (ctrl+S is ctrl+s); an
// unknown name is refused, never sent.
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
// # Bounds
//
// Nothing is answered OK that did not happen. A wait longer than the
// runtime's MaxWait (which refuses a longer one) is made of as many waits
// as it takes; a key repeated more often than one key action takes, or a
// long scroll, of as many actions. A hold cannot be split without
// releasing the key: one past the runtime's MaxWait is an error naming
// the bound (the runtime refuses it before pressing anything). The bounds the
// toolsets set themselves (300 s for a wait or a hold, 10,000 repeats or
// notches) are in the members' schemas, and a value beyond one is refused.
//
// # Failures
//
// A call that cannot run — bad input, a coordinate outside the screenshot,
// an action the runtime refuses — answers with an error result in the
// vendor's shape, and in a batch (an Anthropic turn, an OpenAI actions[]
// list) nothing after the failure runs: Anthropic's later calls are
// answered [NotExecuted], as Anthropic asks.
package toolset
