// Package ptytest opens pseudo-terminals for the tests of what may type
// into a terminal (TIOCSTI): the daemon's boundary against its agent's
// commands, and the plugin Host's against its plugins. Linux only.
package ptytest
