// Package calls holds what the commands of mcs and its web console share about
// running tools: reading arguments typed by a person against a tool's schema,
// the messages of a call that did not run, the display of results, and the
// JSON shape of a processed model reply.
package calls
