package manifest_test

import (
	"encoding/json"
	"testing"

	"shinken.dev/go/escouade/manifest"
)

// fullManifest is a manifest that sets every field, as a plugin that
// declares much of what it may do writes it.
var fullManifest = []byte(`{
	"id": "jira-sync", "version": "1.4.0-beta.2+build.7", "protocolVersion": 1,
	"name": "Jira sync", "description": "Keeps tickets in step.", "author": {"name": "Ada", "email": "ada@example.com"},
	"homepage": "https://example.com/jira-sync",
	"run": {"command": ["./bin/plugin", "--quiet"]},
	"permissions": {
		"events": ["ticket.created", "ticket.column", "agent.created"],
		"decide": true,
		"secrets": ["token", "refresh"],
		"network": ["api.atlassian.com", "{account}", "local:shared"],
		"files": {"plugin": "read", "agentRepo": "write", "temp": "write"},
		"commands": ["git status", "npm test *"],
		"env": ["JIRA_URL"]
	},
	"contributes": {"settings": {
		"project": {"type": "string", "default": "ESC", "description": "The Jira project."},
		"limit": {"type": "number", "default": 2.5},
		"verbose": {"type": "boolean"}
	}},
	"limits": {"fetchMs": 30000, "fetchBytes": 4194304, "fileBytes": 1048576},
	"launch": {"shared": {"command": ["node", "server.js"], "listens": "listening on port (\\d+)"}}
}`)

// BenchmarkParseManifest parses and checks a manifest that sets every
// field, beside encoding/json decoding the same bytes into a map (which
// checks nothing the manifest's rules say) in the same run.
func BenchmarkParseManifest(b *testing.B) {
	b.Run("ParseManifest", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(fullManifest)))
		for b.Loop() {
			if _, err := manifest.Parse(fullManifest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(fullManifest)))
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(fullManifest, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// wrongTyped is a manifest of about 1 MiB whose events are all numbers:
// every element is a problem, and past the 50 reported each is only
// counted.
var wrongTyped = func() []byte {
	b := []byte(`{"id":"x","version":"1.0.0","protocolVersion":1,"run":{"command":["./p"]},"permissions":{"events":[1`)
	for len(b) < 1<<20 {
		b = append(b, ",1"...)
	}
	return append(b, "]}}"...)
}()

// BenchmarkParseWrongTyped parses 1 MiB of wrong-typed elements, beside
// the valid full manifest's parse, scaled to the same bytes, in the same
// run: a manifest of problems costs no more than a good one.
func BenchmarkParseWrongTyped(b *testing.B) {
	b.Run("wrong-typed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wrongTyped)))
		for b.Loop() {
			if _, err := manifest.Parse(wrongTyped); err == nil {
				b.Fatal("parsed")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(wrongTyped)))
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(wrongTyped, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
