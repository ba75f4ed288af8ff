// Package npmpeer installs pinned MCP packages from npm for the tests that run
// real MCP peers (servers and clients written by others) against this module.
// It works on Unix systems, where those tests run.
package npmpeer
