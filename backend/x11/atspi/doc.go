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
//   - talks to each application directly, over the peer-to-peer socket its
//     bridge offers (Application.GetApplicationBusAddress), when it has one;
//   - reads role, name, description, states, parent and interfaces of every
//     node the toolkit caches in one call (Cache.GetItems), whose two
//     shapes (GTK's and Qt's) it both understands;
//   - gets the references of a whole subtree the cache lacks in one call
//     (Collection.GetMatches with a rule that matches everything), then
//     describes those nodes with calls kept in flight by the hundred;
//   - reads extents only for nodes on screen, and action names, values and
//     editable text only where the node has them;
//   - encodes calls and decodes replies itself, writing a window of calls
//     with one system call, because decoding replies through reflection
//     made the client, not the application, the bottleneck;
//   - keeps a mirror of each application's tree, for the toolkits whose
//     events report every change of structure, names, states and text
//     (GTK 3, Gecko, Chromium): a repeated snapshot starts from the last
//     one and reads again only the nodes and subtrees the events since
//     name, and the few things no event reports (the extents of the
//     top-level windows and of one node per container on screen, which
//     move when anything scrolls; the text of editable fields; values).
//     A barrier (a Peer.Ping through the bus, whose reply comes after
//     every event the application sent before it) makes the events of an
//     action recorded before the snapshot that follows it; the toolkit
//     caches' AddAccessible and RemoveAccessible signals count as events
//     too (GTK closes a window with no object event for it). Anything the
//     mirror cannot account for (a sentinel that moved, an event naming a
//     node it cannot place, too many events) makes the snapshot read the
//     whole tree again. mirror.go has the rules;
//   - otherwise, on a repeated snapshot of a GTK 3 application, reuses the
//     extents, roles, interfaces and action names of the last one where
//     the application's events say they still hold, and re-reads
//     sentinels to catch what no event reports. [Options.NoCache] turns
//     both off.
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
// that is not editable has its URL as its value, from the AT-SPI Document
// attributes ("DocURL" in Gecko, "URI" in Chromium): ACI v0 has no URL
// field, and a value is what tree_text shows every agent
// (Value:"https://…") and what a toolset reads for the model (Gemini's
// function responses). A URL longer than 4 KiB (a large data: URL) is
// left out rather than cut. The URL is read again on every snapshot, mirror or
// not, because a same-document navigation (an anchor, history.pushState)
// changes it with no event; a URL that changed makes that snapshot, and
// for a moment every one after it, read the browser's tree whole, since
// the browser's chrome follows a navigation with changes it sends no
// event for.
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
