package escouade_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"shinken.dev/go/escouade"
	"shinken.dev/go/escouade/plugin/plugintest"
	"shinken.dev/go/escouade/protocol"
)

// privateBus starts a D-Bus daemon of the test's own and returns its
// address.
func privateBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dbus-daemon is not installed")
		}
		t.Skip("dbus-daemon is not installed")
	}
	addr := "unix:path=" + filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1", "--address="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// fakeKeychain serves the parts of the Secret Service that SecretService
// uses.
type fakeKeychain struct {
	items  map[string]string // "plugin/key" to secret
	locked map[string]bool
}

func (f *fakeKeychain) SearchItems(attrs map[string]string) ([]dbus.ObjectPath, []dbus.ObjectPath, *dbus.Error) {
	if attrs["application"] != "escouade" {
		return nil, nil, nil
	}
	id := attrs["plugin"] + "/" + attrs["key"]
	path := dbus.ObjectPath("/org/freedesktop/secrets/collection/login/" + strings.NewReplacer("/", "_", "-", "_").Replace(id))
	switch {
	case f.locked[id]:
		return nil, []dbus.ObjectPath{path}, nil
	case f.items[id] != "":
		return []dbus.ObjectPath{path}, nil, nil
	}
	return nil, nil, nil
}

func (f *fakeKeychain) OpenSession(algorithm string, _ dbus.Variant) (dbus.Variant, dbus.ObjectPath, *dbus.Error) {
	if algorithm != "plain" {
		return dbus.MakeVariant(""), "/", dbus.MakeFailedError(errors.New("unsupported"))
	}
	return dbus.MakeVariant(""), "/org/freedesktop/secrets/session/1", nil
}

type secret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

func (f *fakeKeychain) GetSecrets(items []dbus.ObjectPath, session dbus.ObjectPath) (map[dbus.ObjectPath]secret, *dbus.Error) {
	out := map[dbus.ObjectPath]secret{}
	for _, it := range items {
		for id, v := range f.items {
			if strings.HasSuffix(string(it), strings.NewReplacer("/", "_", "-", "_").Replace(id)) {
				out[it] = secret{Session: session, Parameters: []byte{}, Value: []byte(v), ContentType: "text/plain"}
			}
		}
	}
	return out, nil
}

type fakeSession struct{}

func (fakeSession) Close() *dbus.Error { return nil }

func TestSecretService(t *testing.T) {
	addr := privateBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kc := &fakeKeychain{items: map[string]string{"jira/token": "tok-é"}, locked: map[string]bool{"jira/vault": true}}
	conn.Export(kc, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service")
	conn.Export(fakeSession{}, "/org/freedesktop/secrets/session/1", "org.freedesktop.Secret.Session")
	if reply, err := conn.RequestName("org.freedesktop.secrets", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName = %v, %v", reply, err)
	}

	ctx := context.Background()
	store := &escouade.SecretService{Address: addr}
	if v, ok, err := store.Secret(ctx, escouade.SecretOwner{ID: "jira"}, "token"); err != nil || !ok || v != "tok-é" {
		t.Errorf("Secret(token) = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := store.Secret(ctx, escouade.SecretOwner{ID: "jira"}, "absent"); err != nil || ok {
		t.Errorf("Secret(absent) = %v, %v", ok, err)
	}
	if _, _, err := store.Secret(ctx, escouade.SecretOwner{ID: "jira"}, "vault"); err == nil {
		t.Error("a locked secret was read")
	}
	unreachable := &escouade.SecretService{Address: "unix:path=" + filepath.Join(t.TempDir(), "nobus")}
	if _, _, err := unreachable.Secret(ctx, escouade.SecretOwner{ID: "jira"}, "token"); err == nil {
		t.Error("an unreachable bus answered")
	}

	// Through a Host: the keychain's answers as the plugin gets them.
	v := newValidator(t)
	h, j := newHost(t, &escouade.Options{Secrets: store})
	hs, conns := capture()
	connect(t, h, v, "jira", `,"permissions":{"secrets":["token","vault"]}`, "", hs)
	c := <-conns
	if s, ok, err := c.Secret(ctx, "token"); err != nil || !ok || s != "tok-é" {
		t.Errorf("through the Host: %q, %v, %v", s, ok, err)
	}
	if _, _, err := c.Secret(ctx, "vault"); !errors.Is(err, protocol.ErrKeychain) {
		t.Errorf("a locked secret through the Host: %v", err)
	}
	j.wait(t, "jira", "keychain cannot be reached")

	h2, _ := newHost(t, &escouade.Options{Secrets: unreachable})
	hs2, conns2 := capture()
	if _, err := plugintest.Connect(ctx, h2, parseManifest(t, "jira", `,"permissions":{"secrets":["token"]}`), "", hs2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (<-conns2).Secret(ctx, "token"); !errors.Is(err, protocol.ErrKeychain) {
		t.Errorf("an unreachable keychain through the Host: %v", err)
	}
}
