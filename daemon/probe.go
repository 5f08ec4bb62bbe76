package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Probe is an exec-style probe (a container's, a script's): it GETs url
// (http://127.0.0.1:7040/readyz, say) within 5 s and succeeds only on
// 200. The body (a 503's reason) goes to out.
func Probe(ctx context.Context, url string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	fmt.Fprintln(out, strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe %s: %s", url, resp.Status)
	}
	return nil
}
