package readme

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// snippets returns the Go code blocks of a Markdown text, each with the
// indentation of its opening fence removed (a block inside a list item is
// indented), and the line it starts on.
func snippets(md string) (blocks []string, lines []int) {
	var cur []string
	indent, start := "", 0
	in := false
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case !in && trimmed == "```go":
			in, cur, start = true, nil, i+2
			indent = line[:len(line)-len(trimmed)]
		case in && trimmed == "```":
			in = false
			blocks, lines = append(blocks, strings.Join(cur, "\n")+"\n"), append(lines, start)
		case in:
			cur = append(cur, strings.TrimPrefix(line, indent))
		}
	}
	return blocks, lines
}

func TestSnippets(t *testing.T) {
	blocks, lines := snippets(strings.Join([]string{"intro", "```go", "package a", "```", "  ```go", "  package b", "  ", "  func f() {}", "  ```", "```sh", "go run .", "```"}, "\n"))
	want := []string{"package a\n", "package b\n\nfunc f() {}\n"}
	if len(blocks) != 2 || blocks[0] != want[0] || blocks[1] != want[1] || lines[0] != 3 || lines[1] != 6 {
		t.Errorf("snippets = %q at %v, want %q at [3 6]", blocks, lines, want)
	}
}

// TestREADMEBuilds writes each Go snippet of README.md as a package of its
// own inside the module and has go vet compile it, tests included: a
// snippet that does not compile as shown, for want of an import or after
// an API change, fails here with its line in the README.
func TestREADMEBuilds(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the snippets: %v", err)
	}
	md, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, lines := snippets(string(md))
	if len(blocks) < 5 {
		t.Fatalf("README.md has %d Go snippets; the extraction is broken", len(blocks))
	}
	// Inside the module, so that its packages resolve; a leading "_" keeps
	// the directory out of ./... patterns.
	dir, err := os.MkdirTemp(".", "_snippets")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var pkgs []string
	where := map[string]int{}
	for i, b := range blocks {
		if !strings.HasPrefix(b, "package ") {
			t.Errorf("README.md:%d: the snippet does not start with its package clause, so it cannot be copied as is", lines[i])
			continue
		}
		name := fmt.Sprintf("s%02d", i)
		file := "snippet.go"
		if strings.Contains(b, "func Test") {
			file = "snippet_test.go"
		}
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, file), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.Join(dir, name))
		where[name] = lines[i]
	}
	cmd := exec.Command(gobin, append([]string{"vet"}, pkgs...)...)
	// For Linux wherever the test runs: one snippet uses the X11 backend.
	cmd.Env = append(os.Environ(), "GOOS=linux")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		// Name each error by its line in the README.
		report := regexp.MustCompile(`\S*(s\d\d)[/\\]snippet(?:_test)?\.go:(\d+)`).ReplaceAllStringFunc(out.String(), func(m string) string {
			sub := regexp.MustCompile(`(s\d\d)[/\\]snippet(?:_test)?\.go:(\d+)$`).FindStringSubmatch(m)
			n, _ := strconv.Atoi(sub[2])
			return fmt.Sprintf("README.md:%d", where[sub[1]]+n-1)
		})
		t.Errorf("the README's snippets do not build: %v\n%s", err, report)
	}
}
