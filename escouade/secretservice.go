package escouade

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"
)

// SecretService is the default SecretStore: the desktop's keychain (GNOME
// Keyring, KWallet, KeePassXC) over the Secret Service D-Bus API. A
// plugin's secret is the item with the attributes application=escouade,
// plugin=<id>, folder=<its folder's real path> (none without a folder) and
// key=<key>, as secret-tool makes it:
//
//	secret-tool store --label='Escouade: <id> <key>' application escouade plugin <id> folder <dir> key <key>
//
// An unreachable bus or service, or a locked item, is an error: the plugin
// is answered keychain.
type SecretService struct {
	Address string // the bus's; "": the session bus ($DBUS_SESSION_BUS_ADDRESS)
}

const (
	secretsName  = "org.freedesktop.secrets"
	secretsPath  = dbus.ObjectPath("/org/freedesktop/secrets")
	secretsIface = "org.freedesktop.Secret.Service"
)

// secretValue is the Secret Service's Secret struct, (oayays).
type secretValue struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// Secret implements SecretStore.
func (s *SecretService) Secret(ctx context.Context, owner SecretOwner, key string) (string, bool, error) {
	var conn *dbus.Conn
	var err error
	if s.Address == "" {
		conn, err = dbus.ConnectSessionBus(dbus.WithContext(ctx))
	} else {
		conn, err = dbus.Connect(s.Address, dbus.WithContext(ctx))
	}
	if err != nil {
		return "", false, fmt.Errorf("escouade: secret service: %w", err)
	}
	defer conn.Close()
	svc := conn.Object(secretsName, secretsPath)
	attrs := map[string]string{"application": "escouade", "plugin": owner.ID, "key": key}
	if owner.Dir != "" {
		attrs["folder"] = owner.Dir
	}
	var unlocked, locked []dbus.ObjectPath
	if err := svc.CallWithContext(ctx, secretsIface+".SearchItems", 0, attrs).Store(&unlocked, &locked); err != nil {
		return "", false, fmt.Errorf("escouade: secret service: %w", err)
	}
	if len(unlocked) == 0 {
		if len(locked) > 0 {
			return "", false, errors.New("escouade: secret service: the secret is locked")
		}
		return "", false, nil
	}
	var ignored dbus.Variant
	var session dbus.ObjectPath
	if err := svc.CallWithContext(ctx, secretsIface+".OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&ignored, &session); err != nil {
		return "", false, fmt.Errorf("escouade: secret service: %w", err)
	}
	defer conn.Object(secretsName, session).CallWithContext(ctx, "org.freedesktop.Secret.Session.Close", 0)
	var secrets map[dbus.ObjectPath]secretValue
	if err := svc.CallWithContext(ctx, secretsIface+".GetSecrets", 0, unlocked[:1], session).Store(&secrets); err != nil {
		return "", false, fmt.Errorf("escouade: secret service: %w", err)
	}
	v, ok := secrets[unlocked[0]]
	if !ok {
		return "", false, errors.New("escouade: secret service: the secret was not returned")
	}
	if !utf8.Valid(v.Value) {
		return "", false, errors.New("escouade: secret service: the secret is not text")
	}
	return string(v.Value), true, nil
}
