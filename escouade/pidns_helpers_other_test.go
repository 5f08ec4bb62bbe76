//go:build !linux

package escouade_test

import (
	"context"
	"io"
)

// runNamespaceHelper knows no mode here: pid namespaces and cgroups are
// Linux's.
func runNamespaceHelper(context.Context, io.Reader, io.Writer, string, []string) int { return 2 }

// desert does nothing here: no parent-death signal, no cgroup.
func desert() bool { return true }
