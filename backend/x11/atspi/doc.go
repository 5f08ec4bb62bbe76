// Package atspi reads the accessibility trees of Linux applications over
// AT-SPI, the D-Bus protocol that GTK, Qt, Firefox, Chromium and
// LibreOffice speak, and acts on their nodes. It is pure Go: no libatspi,
// no cgo.
//
// A [Client] implements [shinken.dev/go/shinken.A11y] and
// [shinken.dev/go/shinken.ChangeWatcher]; the X11 backend embeds one.
// [Connect] finds the accessibility bus, turns accessibility on
// (org.a11y.Status) and registers for the events that [Client.Watch]
// reports, which also makes toolkit bridges build the caches a walk reads.
//
// # Speed
//
// The usual AT-SPI client asks one D-Bus question per property per node,
// each a round trip through the bus daemon. A [Client.Snapshot] instead:
//
//   - talks to each application directly, over its bridge's peer-to-peer
//     socket (Application.GetApplicationBusAddress) when it has one;
//   - reads role, name, description, states, parent and interfaces of every
//     node the toolkit caches in one call (Cache.GetItems, GTK's or Qt's);
//   - gets the references of a subtree the cache lacks in one call
//     (Collection.GetMatches), then describes those nodes with calls kept
//     in flight by the hundred;
//   - reads extents only for nodes on screen, and action names, values and
//     editable text only where the node has them;
//   - encodes and decodes D-Bus messages itself, with no reflection,
//     writing a window of calls with one system call;
//   - keeps a mirror of each application's tree where its events report
//     every change (GTK 3, Gecko, Chromium): a repeated snapshot reads
//     again only the nodes the events since the last one name, and what
//     no event reports (the extents of top-level windows and of one node
//     per container on screen, editable text, values). The events of an
//     action count before the snapshot that follows it; anything the
//     mirror cannot account for makes the snapshot read the whole tree;
//   - otherwise, on a GTK 3 application, reuses the last snapshot's
//     extents, roles, interfaces and action names where the events say
//     they hold. [Options.NoCache] turns both off.
//
// Measured side by side with a plain pyatspi walk of role, name, states
// and extents (BENCHMARKS.md), a repeated snapshot with nothing changed
// takes about 3 ms on gtk3-demo's main window (189 nodes) and 5 ms on a
// Chromium page of 405 nodes, against 100 to 150 ms for the walk.
//
// # Toolkits
//
// Qt 5 and 6 answer Application.GetApplicationBusAddress with an error
// (no peer-to-peer socket: they are read through the bus) and crash on
// Properties.GetAll, so their nodes' properties are asked one by one. They
// join the accessibility bus only when the X root window carries
// AT_SPI_BUS, which the X11 backend publishes when the bus launcher did
// not, or when started with QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1. A field
// with an empty name takes the name of the label its relations name
// (LABELLED_BY), else of the label beside it on its row.
//
// # Document URLs
//
// A browser's page ("document web") or frame document ("document frame")
// that is not editable has its URL as its value (ACI v0 has no URL field),
// from the AT-SPI Document attributes ("DocURL" in Gecko, "URI" in
// Chromium). A URL longer than 4 KiB is left out rather than cut. It is
// read on every snapshot, since a same-document navigation changes it
// with no event; a URL that changed makes that snapshot, and for a moment
// those after it, read the browser's tree whole.
//
// # Element verbs
//
// [Client.Perform] invokes actions and sets values. A combo box that is not
// editable takes a value by option name: Selection.SelectChild, else the
// option's action, else opening the popup and taking the option (GTK);
// Qt leaves the option selected in the open popup, which the X11 backend
// takes with the keyboard ([PopupOpenError]). A browser's page field, or a
// field with no editable text or value, answers [ErrNeedsTyping], and the
// X11 backend focuses it ([Client.Focus]), selects its text, types and
// reads it back ([Client.Text]). [Client.Locate] says where a node can be
// clicked without walking its application: its extents and its
// ancestors' in one round trip, after Component.ScrollTo when it is not
// wholly visible.
//
// # Budgets and failures
//
// Each application is read under its own timeout ([Options.AppTimeout])
// and a per-reply limit ([Options.CallTimeout]), both lengthened by the
// application's measured lag, so that a loaded machine's slow answers are
// not taken for a hang. One that hangs or quits
// during the walk is left out, the others are still returned, and the tree
// says why it is incomplete in Tree.TruncatedWhy; an application that timed
// out is skipped for [Options.HungBackoff]. A node budget and a depth cap
// cut the tree the same way.
//
// Node IDs are "busname:/object/path" (the application's unique bus name),
// stable for the life of the node, and Provenance holds the two parts.
package atspi
