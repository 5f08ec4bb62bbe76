package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"shinken.dev/go/daemon"

	"go.yaml.in/yaml/v3"
)

// manifests parses every YAML document in deploy/kubernetes, by kind.
func manifests(t *testing.T) map[string][]map[string]any {
	t.Helper()
	files, err := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	byKind := map[string][]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if !strings.HasPrefix(doc["apiVersion"].(string), "extensions.agents.x-k8s.io/") {
				t.Errorf("%s: apiVersion %v", f, doc["apiVersion"])
			}
			kind := doc["kind"].(string)
			byKind[kind] = append(byKind[kind], doc)
		}
	}
	return byKind
}

// at walks a parsed YAML document along keys (strings) and indexes (ints).
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %q", path, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

// TestManifests checks that the deploy files parse and name what the
// binary serves: its flags, the port it listens on, the probe paths.
func TestManifests(t *testing.T) {
	kinds := manifests(t)
	if len(kinds["SandboxTemplate"]) != 1 || len(kinds["SandboxWarmPool"]) != 1 {
		t.Fatalf("want one SandboxTemplate and one SandboxWarmPool, got %v", kinds)
	}
	tmpl := kinds["SandboxTemplate"][0]
	name := at(t, tmpl, "metadata", "name")
	if got := at(t, kinds["SandboxWarmPool"][0], "spec", "sandboxTemplateRef", "name"); got != name {
		t.Errorf("the warm pool names template %v, not %v", got, name)
	}
	for _, claim := range kinds["SandboxClaim"] {
		if got := at(t, claim, "spec", "warmPoolRef", "name"); got != at(t, kinds["SandboxWarmPool"][0], "metadata", "name") {
			t.Errorf("a claim names pool %v", got)
		}
		if at(t, claim, "spec").(map[string]any)["env"] != nil {
			t.Error("a claim sets env: that forces a cold start")
		}
	}
	c := at(t, tmpl, "spec", "podTemplate", "spec", "containers", 0)
	var args []string
	for _, a := range at(t, c, "args").([]any) {
		args = append(args, a.(string))
	}
	port := listenPort(t, args)
	if got := at(t, c, "ports", 0, "containerPort"); got != port {
		t.Errorf("containerPort %v, -listen port %v", got, port)
	}
	for probe, path := range map[string]string{"livenessProbe": daemon.PathHealthz, "readinessProbe": daemon.PathReadyz, "startupProbe": daemon.PathHealthz} {
		if got := at(t, c, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path %v, want %s", probe, got, path)
		}
		if got := at(t, c, probe, "httpGet", "port"); got != port {
			t.Errorf("%s port %v, want %d", probe, got, port)
		}
	}
	// Margin: one slow probe must not take a busy pod out, and the
	// drain must fit in the grace period.
	if n, _ := at(t, c, "readinessProbe", "failureThreshold").(int); n < 2 {
		t.Errorf("readinessProbe failureThreshold %d: one slow probe marks the pod unready", n)
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if n, _ := at(t, c, probe, "timeoutSeconds").(int); n < 2 {
			t.Errorf("%s timeoutSeconds %d: want margin", probe, n)
		}
	}
	flagSeconds := func(name string) int {
		i := slices.Index(args, name)
		if i < 0 || i+1 == len(args) {
			t.Fatalf("no %s in %v", name, args)
		}
		d, err := time.ParseDuration(args[i+1])
		if err != nil {
			t.Fatalf("%s %s: %v", name, args[i+1], err)
		}
		return int(d.Seconds())
	}
	grace, _ := at(t, tmpl, "spec", "podTemplate", "spec", "terminationGracePeriodSeconds").(int)
	if delay, drain := flagSeconds("-drain-delay"), flagSeconds("-drain-timeout"); delay < 2 || delay+drain+5 > grace {
		t.Errorf("-drain-delay %ds and -drain-timeout %ds do not fit in the grace period %ds with 5 s to spare (or the delay is too short for endpoints to be removed)", delay, drain, grace)
	}
	ingress := at(t, tmpl, "spec", "networkPolicy", "ingress").([]any)
	for i := range ingress {
		ports := at(t, ingress, i, "ports").([]any)
		if len(ports) != 1 || at(t, ports, 0, "port") != port {
			t.Errorf("ingress rule %d admits %v, want only port %d", i, ports, port)
		}
	}
	if !slices.Contains(args, "-session") {
		t.Error("the template's runtime does not start its own desktop")
	}
	checkFlags(t, args)
	if at(t, tmpl, "spec", "podTemplate", "spec", "securityContext", "runAsNonRoot") != true {
		t.Error("the pod may run as root")
	}
	checkAgentUser(t, args)
	// A warm pod gets its token after the claim: without this flag it
	// would never be ready, and the pool would never fill.
	if !slices.Contains(args, "-ready-without-token") {
		t.Errorf("%v: a warm pod with no token yet would stay unready (-ready-without-token)", args)
	}
	var added []string
	for _, c := range at(t, c, "securityContext", "capabilities", "add").([]any) {
		added = append(added, c.(string))
	}
	if slices.Sort(added); !slices.Equal(added, []string{"CHOWN", "KILL", "SETGID", "SETUID"}) {
		t.Errorf("capabilities added %v, want exactly those of the user switch", added)
	}
	if at(t, c, "securityContext", "allowPrivilegeEscalation") != true {
		t.Error("allowPrivilegeEscalation false: the binary's file capabilities would not be granted")
	}
}

// checkAgentUser checks that args run the agent's commands as their own
// user, and that the daemon is not ready without it.
func checkAgentUser(t *testing.T, args []string) {
	t.Helper()
	if i := slices.Index(args, "-agent-user"); i < 0 || i+1 == len(args) || args[i+1] != "agent" {
		t.Errorf("%v: the agent's commands do not run as the image's user agent", args)
	}
	if !slices.Contains(args, "-require-agent-user") {
		t.Errorf("%v: the daemon would serve without the user switch", args)
	}
}

// listenPort returns the port of the -listen flag in args.
func listenPort(t *testing.T, args []string) int {
	t.Helper()
	i := slices.Index(args, "-listen")
	if i < 0 || i+1 == len(args) {
		t.Fatalf("no -listen in %v", args)
	}
	m := regexp.MustCompile(`:(\d+)$`).FindStringSubmatch(args[i+1])
	if m == nil {
		t.Fatalf("-listen %q has no port", args[i+1])
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// checkFlags checks that every flag in args is one the binary has.
func checkFlags(t *testing.T, args []string) {
	t.Helper()
	bin := build(t, t.TempDir(), ".", "example")
	usage, _ := exec.Command(bin, "-h").CombinedOutput()
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !bytes.Contains(usage, []byte("  "+a+" ")) && !bytes.Contains(usage, []byte("  "+a+"\n")) {
			t.Errorf("flag %s is not the binary's:\n%s", a, usage)
		}
	}
}

// TestDockerfile checks the image: Debian slim, an unprivileged user, the
// daemon as entrypoint with its own desktop, on the port the manifests use,
// and the flags the binary has.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	from := regexp.MustCompile(`(?m)^FROM (\S+)\s*$`).FindAllStringSubmatch(text, -1)
	if len(from) == 0 || !strings.HasPrefix(from[len(from)-1][1], "debian:") || !strings.HasSuffix(from[len(from)-1][1], "-slim") {
		t.Errorf("final stage %v is not Debian slim", from)
	}
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(text)
	if user == nil || strings.HasPrefix(user[1], "0") || strings.HasPrefix(user[1], "root") {
		t.Errorf("USER %v", user)
	}
	if !regexp.MustCompile(`(?m)^ENTRYPOINT \[.*"/usr/local/bin/shinken-runtime"\]`).MatchString(text) {
		t.Error("the daemon is not the entrypoint")
	}
	cmd := regexp.MustCompile(`(?m)^CMD \[(.*)\]`).FindStringSubmatch(text)
	if cmd == nil {
		t.Fatal("no CMD")
	}
	var args []string
	for _, a := range strings.Split(cmd[1], ",") {
		args = append(args, strings.Trim(strings.TrimSpace(a), `"`))
	}
	if !slices.Contains(args, "-session") {
		t.Errorf("CMD %v does not start the desktop", args)
	}
	checkAgentUser(t, args)
	for _, want := range []string{"useradd --uid 10002 --create-home --shell /bin/sh agent", "setcap cap_setuid,cap_setgid,cap_kill,cap_chown=ep /usr/local/bin/shinken-runtime"} {
		if !strings.Contains(text, want) {
			t.Errorf("the image lacks %q", want)
		}
	}
	if p := listenPort(t, args); !strings.Contains(text, "EXPOSE "+strconv.Itoa(p)) {
		t.Errorf("the image listens on %d but exposes another port", p)
	}
	checkFlags(t, args)
}
