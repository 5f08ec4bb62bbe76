package realapps

import (
	"os/exec"

	"shinken.dev/go/backend/x11/atspi/atspitest"
)

// The applications, each started on d's desktop with its window at the
// screen's top left, killed by t's cleanup.

func (d *desk) chromium(page string) {
	d.t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		atspitest.Missing(d.t, "chromium")
	}
	d.sess.LaunchEnv(d.t, nil, bin, "--no-sandbox", "--no-first-run", "--no-default-browser-check",
		"--disable-gpu", "--force-renderer-accessibility", "--password-store=basic",
		"--disable-features=Translate,MediaRouter", "--user-data-dir="+d.t.TempDir(),
		"--window-position=0,0", "--window-size=900,700", "file://"+testdata(d.t, page))
}

func (d *desk) firefox(page string) {
	d.t.Helper()
	bin, err := exec.LookPath("firefox-esr")
	if err != nil {
		atspitest.Missing(d.t, "firefox-esr")
	}
	d.sess.LaunchEnv(d.t, []string{"MOZ_CRASHREPORTER_DISABLE=1", "GNOME_ACCESSIBILITY=1"}, bin,
		"--no-remote", "--new-instance", "--profile", atspitest.FirefoxProfile(d.t),
		"file://"+testdata(d.t, page))
}

// qt starts the Qt form with PyQt5 (version "5") or PyQt6 ("6").
func (d *desk) qt(title, version string) *atspitest.App {
	d.t.Helper()
	py := atspitest.Python(d.t, "PyQt"+version+".QtWidgets")
	return d.sess.LaunchEnv(d.t, []string{"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1"}, py,
		"../atspi/testdata/qtform.py", title, version)
}
