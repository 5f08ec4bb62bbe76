// Package readme holds the test that keeps the repository's README.md
// true: every Go snippet in it compiles as shown, imports included.
package readme
