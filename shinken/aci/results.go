package aci

// Version is the version of this library, reported in the welcome.
const Version = "0.1.0"

// ScreenSize is the value of the screen_size query, in action pixels.
type ScreenSize struct {
	W int `json:"w"`
	H int `json:"h"`
}

// WindowInfo is one entry of the list_windows query.
type WindowInfo struct {
	ID     uint64 `json:"id"`
	Title  string `json:"title"`
	App    string `json:"app,omitempty"`
	PID    int    `json:"pid,omitempty"`
	BBox   []int  `json:"bbox,omitempty"` // [x, y, w, h]
	Active *bool  `json:"active,omitempty"`
}

// ClipboardValue is the value of the result answering clipboard_get.
type ClipboardValue struct {
	Text string `json:"text"`
}
