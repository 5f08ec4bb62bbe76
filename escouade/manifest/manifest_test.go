package manifest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"shinken.dev/go/escouade/manifest"
	"shinken.dev/go/escouade/protocol"
)

func TestParseManifestFull(t *testing.T) {
	m, err := manifest.Parse([]byte(`{
		"id": "jira-sync",
		"version": "1.4.0-beta.2+build.7",
		"protocolVersion": 1,
		"run": {"command": ["./bin/plugin", "--quiet"]},
		"permissions": {
			"events": ["ticket.created", "ticket.column"],
			"decide": true,
			"secrets": ["token"],
			"network": ["api.atlassian.com", "{account}", "local:shared"],
			"files": {"plugin": "read", "agentRepo": "write"},
			"commands": ["git status", "npm test *"]
		},
		"contributes": {"settings": {
			"project": {"type": "string", "default": "ESC", "description": "The Jira project."},
			"limit": {"type": "number", "default": 2.5},
			"verbose": {"type": "boolean"}
		}},
		"limits": {"fetchMs": 30000, "fetchBytes": 4194304, "fileBytes": 1048576},
		"launch": {"shared": {"command": ["node", "server.js"], "listens": "listening on port (\\d+)"}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &manifest.Manifest{
		ID: "jira-sync", Version: "1.4.0-beta.2+build.7", ProtocolVersion: 1,
		Run: manifest.Run{Command: []string{"./bin/plugin", "--quiet"}},
		Permissions: manifest.Permissions{
			Events:   []string{"ticket.created", "ticket.column"},
			Decide:   true,
			Secrets:  []string{"token"},
			Network:  []string{"api.atlassian.com", "{account}", "local:shared"},
			Files:    map[string]manifest.Access{"plugin": manifest.AccessRead, "agentRepo": manifest.AccessWrite},
			Commands: []string{"git status", "npm test *"},
		},
		Contributes: manifest.Contributes{Settings: map[string]manifest.SettingSpec{
			"project": {Type: manifest.SettingString, Default: "ESC", Description: "The Jira project."},
			"limit":   {Type: manifest.SettingNumber, Default: 2.5},
			"verbose": {Type: manifest.SettingBoolean},
		}},
		Limits: manifest.Limits{FetchMs: 30000, FetchBytes: 4 << 20, FileBytes: 1 << 20},
		Launch: manifest.Launch{Shared: &manifest.SharedProcess{Command: []string{"node", "server.js"}, Listens: `listening on port (\d+)`}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

func TestParseManifestRefusals(t *testing.T) {
	base := `"id":"p","version":"1.0.0","protocolVersion":1`
	run := `"run":{"command":["x"]}`
	tests := []struct {
		name     string
		manifest string
		paths    []string // every path that must be named
	}{
		{"unknown top field", `{` + base + `,` + run + `,"names":"P"}`, []string{"names"}},
		{"unknown fields everywhere", `{` + base + `,"run":{"command":["x"],"shell":"sh"},"permissions":{"event":[]},"limits":{"fetch":1}}`, []string{"run.shell", "permissions.event", "limits.fetch"}},
		{"a key in another case", `{` + base + `,` + run + `,"Permissions":{}}`, []string{"Permissions"}},
		{"missing fields", `{"id":"p"}`, []string{"version", "protocolVersion", "run"}},
		{"bad id", `{"id":"My Plugin","version":"1.0.0","protocolVersion":1,` + run + `}`, []string{"id"}},
		{"bad version", `{"id":"p","version":"v1","protocolVersion":1,` + run + `}`, []string{"version"}},
		{"other protocol", `{"id":"p","version":"1.0.0","protocolVersion":2,` + run + `}`, []string{"protocolVersion"}},
		{"fractional protocol", `{"id":"p","version":"1.0.0","protocolVersion":1.0,` + run + `}`, []string{"protocolVersion"}},
		{"two runs", `{` + base + `,"run":{"command":["x"],"js":"main.js"}}`, []string{"run"}},
		{"no run", `{` + base + `,"run":{}}`, []string{"run"}},
		{"empty command", `{` + base + `,"run":{"command":[]}}`, []string{"run.command"}},
		{"command not strings", `{` + base + `,"run":{"command":["x",1]}}`, []string{"run.command[1]"}},
		{"wasm leaves", `{` + base + `,"run":{"wasm":"../x.wasm"}}`, []string{"run.wasm"}},
		{"unknown fact", `{` + base + `,` + run + `,"permissions":{"events":["agent.created","agent.exploded"]}}`, []string{"permissions.events[1]"}},
		{"fact twice", `{` + base + `,` + run + `,"permissions":{"events":["agent.created","agent.created"]}}`, []string{"permissions.events[1]"}},
		{"decide not bool", `{` + base + `,` + run + `,"permissions":{"decide":"yes"}}`, []string{"permissions.decide"}},
		{"bad host", `{` + base + `,` + run + `,"permissions":{"network":["https://x.com","localhost","a.b:80","ok.example.com"]}}`, []string{"permissions.network[0]", "permissions.network[1]", "permissions.network[2]"}},
		{"bad root", `{` + base + `,` + run + `,"permissions":{"files":{"home":"read"}}}`, []string{"permissions.files.home"}},
		{"bad access", `{` + base + `,` + run + `,"permissions":{"files":{"agent":"rw"}}}`, []string{"permissions.files.agent"}},
		{"bad commands", `{` + base + `,` + run + `,"permissions":{"commands":["/bin/rm x","git  log","npm * x","*"]}}`, []string{"permissions.commands[0]", "permissions.commands[1]", "permissions.commands[2]", "permissions.commands[3]"}},
		{"bad setting", `{` + base + `,` + run + `,"contributes":{"settings":{"a":{"type":"int"},"b":{"type":"number","default":"3"},"c":{"default":1},"d":{"type":"string","color":"red"}}}}`,
			[]string{"contributes.settings.a.type", "contributes.settings.b.default", "contributes.settings.c.type", "contributes.settings.d.color"}},
		{"limits past the maximum", `{` + base + `,` + run + `,"limits":{"fetchMs":120001,"fetchBytes":0,"fileBytes":4194305}}`, []string{"limits.fetchMs", "limits.fetchBytes", "limits.fileBytes"}},
		{"bad launch", `{` + base + `,` + run + `,"launch":{"shared":{"command":["node"],"listens":"port \\d+"}}}`, []string{"launch.shared.listens"}},
		{"launch without listens", `{` + base + `,` + run + `,"launch":{"shared":{"command":["node"]}}}`, []string{"launch.shared.listens"}},
		{"command leaves the folder", `{` + base + `,"run":{"command":["../../bin/sh","-c","x"]}}`, []string{"run.command[0]"}},
		{"command not clean", `{` + base + `,"run":{"command":["bin/../../sh"]}}`, []string{"run.command[0]"}},
		{"shared leaves the folder", `{` + base + `,` + run + `,"launch":{"shared":{"command":["./../x"],"listens":"port (\\d+)"}}}`, []string{"launch.shared.command[0]"}},
		{"plugin written", `{` + base + `,` + run + `,"permissions":{"files":{"plugin":"write"}}}`, []string{"permissions.files.plugin"}},
		{"env never set", `{` + base + `,` + run + `,"permissions":{"env":["PATH","LD_PRELOAD","ESCOUADE_TOKEN","A=B","ok"]}}`, []string{"permissions.env[0]", "permissions.env[1]", "permissions.env[2]", "permissions.env[3]"}},
		{"display fields checked", `{` + base + `,` + run + `,"name":1,"homepage":"javascript:x","author":{"email":"a@b"}}`, []string{"name", "homepage", "author.name"}},
		{"other fields refused", `{` + base + `,` + run + `,"license":"MIT"}`, []string{"license"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tt.manifest))
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *protocol.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			for _, p := range tt.paths {
				if !strings.Contains(err.Error(), "escouade: "+p+": ") {
					t.Errorf("the error does not name %s:\n%v", p, err)
				}
			}
		})
	}
}

func TestParseManifestStrictJSON(t *testing.T) {
	for _, bad := range []string{
		`{"id":"p","id":"q","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]}}`,
		`{"id":"p","version":"1.0.0","protocolVersion":1,"run":{"command":["x"],"comm\u0061nd":["y"]}}`,
		"{\"id\":\"p\xff\",\"version\":\"1.0.0\",\"protocolVersion\":1,\"run\":{\"command\":[\"x\"]}}",
		`{"id":"p",}`,
		`[]`,
	} {
		if _, err := manifest.Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	_, err := manifest.Parse([]byte(`{"id":"p","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]},"extra":1}`))
	if !errors.Is(err, protocol.ErrUnknownField) {
		t.Errorf("an unknown field: %v", err)
	}
}

func TestReadManifestAndFindPlugins(t *testing.T) {
	parent := t.TempDir()
	for _, id := range []string{"b", "a"} {
		dir := filepath.Join(parent, id)
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"id":"`+id+`","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]}}`), 0o644)
	}
	os.Mkdir(filepath.Join(parent, "empty"), 0o755)
	os.WriteFile(filepath.Join(parent, "file"), nil, 0o644)
	dirs, err := manifest.Find(parent)
	if err != nil || len(dirs) != 2 || filepath.Base(dirs[0]) != "a" || filepath.Base(dirs[1]) != "b" {
		t.Fatalf("FindPlugins = %v, %v", dirs, err)
	}
	m, err := manifest.Read(dirs[1])
	if err != nil || m.ID != "b" {
		t.Fatalf("ReadManifest = %+v, %v", m, err)
	}
	if _, err := manifest.Read(filepath.Join(parent, "empty")); err == nil {
		t.Error("a folder without a manifest was read")
	}
	if _, err := manifest.Find(filepath.Join(parent, "nope")); err == nil {
		t.Error("a missing folder was listed")
	}
}

// TestManifestErrorsBounded: a manifest's error names every problem up to
// a bound, then counts the rest: a manifest of a thousand unknown fields
// makes a short error, not a thousand lines.
func TestManifestErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"x","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]}`)
	for i := range 1000 {
		fmt.Fprintf(&b, `,"f%d":1`, i)
	}
	b.WriteString("}")
	_, err := manifest.Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "and 950 more problems") || strings.Count(err.Error(), "\n") > 60 {
		t.Errorf("ParseManifest = %.300v", err)
	}
}

// TestManifestDisplayFields: the fields every plugin author writes are
// accepted and kept; they change nothing the Host does.
func TestManifestDisplayFields(t *testing.T) {
	for _, author := range []string{`"Ada"`, `{"name":"Ada","email":"ada@example.com","url":"https://example.com"}`} {
		m, err := manifest.Parse([]byte(`{"id":"d","version":"1.0.0","protocolVersion":1,"run":{"command":["bin/d"]},
			"name":"Display","description":"Shows fields","author":` + author + `,"homepage":"https://example.com/d"}`))
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != "Display" || m.Description != "Shows fields" || m.Author != "Ada" || m.Homepage != "https://example.com/d" {
			t.Errorf("display fields %+v", m)
		}
	}
}

// TestManifestFieldsByName: the manifest decodes by its fields' names, so
// that the same fields in another order make the same manifest.
func TestManifestFieldsByName(t *testing.T) {
	want, err := manifest.Parse(fullManifest)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(fullManifest, &v); err != nil {
		t.Fatal(err)
	}
	sorted, err := json.Marshal(v) // every object's keys in alphabetical order
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(sorted, fullManifest) {
		t.Fatal("the manifest's keys were in order already")
	}
	got, err := manifest.Parse(sorted)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("reordered: %+v, %v\nwant %+v", got, err, want)
	}
}

// TestManifestWrongTypedBounded: a thousand wrong-typed elements make 50
// problems named and the rest counted, each element once (its value is
// not checked again past the bound).
func TestManifestWrongTypedBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"x","version":"1.0.0","protocolVersion":1,"run":{"command":["x"]},"permissions":{"events":[1`)
	for range 999 {
		b.WriteString(",1")
	}
	b.WriteString("]}}")
	_, err := manifest.Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "and 950 more problems") || strings.Count(err.Error(), "\n") != 50 {
		t.Errorf("Parse = %.300v (%d lines)", err, strings.Count(fmt.Sprint(err), "\n"))
	}
}
