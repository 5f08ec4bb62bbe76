package shinkentest

// ServeProxied is Serve dialling through proxy, for the external tests,
// which check every message against the ACI schema.
var ServeProxied = serveTraced
