package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceScenarios are the server scenarios of the MCP conformance
// suite (@modelcontextprotocol/conformance) that apply to any server. The
// suite's other scenarios call the tools, prompts and resources of its own
// reference server ("test_simple_text", "test_image_content"...), which a
// server with other tools fails by construction.
var conformanceScenarios = []string{
	"server-initialize", "ping", "tools-list", "logging-set-level", "resources-list", "prompts-list",
	"server-sse-multiple-streams", "dns-rebinding-protection",
}

var conformancePassed = regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)

// TestConformance runs the MCP conformance suite's applicable server
// scenarios against the Server over streamable HTTP. The suite's runner
// cannot send a bearer token, so it reaches the SDK's handler directly, as
// Handler serves it behind RequireToken; it has no stdio mode.
func TestConformance(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed (scripts/test installs it)")
	}
	suite, err := filepath.Abs(filepath.Join("..", "..", ".npm", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the MCP conformance suite is not installed (scripts/test installs it): %v", err)
	}
	e := newEnv(t, nil)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return e.srv.MCP() }, nil))
	t.Cleanup(func() {
		e.srv.Close()
		hs.Close()
	})
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", hs.URL+"/mcp", "--scenario", sc)
			cmd.WaitDelay = 5 * time.Second
			out, err := cmd.CombinedOutput()
			if err != nil || !conformancePassed.Match(out) {
				t.Fatalf("conformance %s: %v\n%s", sc, err, out)
			}
		})
	}
}
