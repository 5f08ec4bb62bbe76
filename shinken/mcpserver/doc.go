// Package mcpserver serves an ACI session over the Model Context Protocol,
// so that any MCP client (a coding agent, a desktop assistant, an
// MCP-speaking framework) can see and drive the desktop with no code of
// ours on its side.
package mcpserver
