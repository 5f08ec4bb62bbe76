// Package wiretest holds black-box tests of the ACI runtime as a strict and
// hostile client meets it: they build the example daemon, run it on a free
// port, and speak the raw protocol to it over WebSocket, checking every
// message the daemon sends against aci-v0.schema.json. The package has no
// code of its own; everything lives in its _test.go files.
//
// The tests cover the handshake, every verb and query, coordinate spaces and
// frame hashes, a deterministic wire fuzzer, and concurrency seen from the
// wire (pipelining, many connections, a client that never reads, connections
// dropped mid-exec).
//
// TestMain builds the daemon twice into a temporary directory: with the
// race detector (every test but the memory ones runs it, and fails on a
// race or a panic in its log) and without (for real memory figures). To
// test prebuilt binaries instead, set WIRETEST_RACE_BIN and WIRETEST_BIN.
package wiretest
