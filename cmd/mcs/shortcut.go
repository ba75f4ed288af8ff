package main

import (
	"fmt"
	"strings"

	"github.com/mcs-go/mcs/cmd/mcs/internal/tomlstr"
)

// shortcutPolicy is the permission policy of the drivers the driver flags
// declare.
type shortcutPolicy int

const (
	// policyAsk is the demo's: reads run, every other call is asked.
	policyAsk shortcutPolicy = iota
	// policyReadOnly runs reads and refuses every other call: nobody can be
	// asked (serve-mcp over stdio).
	policyReadOnly
	// policyYes runs every call unasked (--yes).
	policyYes
)

// shortcutStack writes the stack file the driver flags declare: one REST driver
// per --openapi (labelled api, api-2, ...), one read-only filesystem driver per
// --fs (files, files-2, ...), one CSV driver per --csv (csv, csv-2, ...). Paths
// are taken as given, relative to the current directory. Every call is audited
// on stderr and validated; policy decides which calls run (see shortcutPolicy).
func shortcutStack(openapi, fs, csv []string, baseURL string, policy shortcutPolicy) []byte {
	var b strings.Builder
	b.WriteString("# declared by the command line\n")
	add := func(label string, n int, typ string, keys ...string) {
		if n > 0 {
			label = fmt.Sprintf("%s-%d", label, n+1)
		}
		fmt.Fprintf(&b, "[[driver]]\nlabel = %s\ntype = %s\n", tomlstr.Quote(label), tomlstr.Quote(typ))
		for i := 0; i+1 < len(keys); i += 2 {
			fmt.Fprintf(&b, "%s = %s\n", keys[i], keys[i+1])
		}
	}
	for i, spec := range openapi {
		keys := []string{"spec", tomlstr.Quote(spec)}
		if baseURL != "" {
			keys = append(keys, "base_url", tomlstr.Quote(baseURL))
		}
		add("api", i, "rest", keys...)
	}
	for i, dir := range fs {
		add("files", i, "filesystem", "root", tomlstr.Quote(dir), "read_only", "true")
	}
	for i, dir := range csv {
		add("csv", i, "csv", "root", tomlstr.Quote(dir))
	}
	switch policy {
	case policyYes:
		b.WriteString("\n[middleware]\norder = [\"hooks\", \"validate\", \"auth\"]\n[middleware.hooks]\naudit_log = \"-\"\n")
	default:
		b.WriteString("\n[middleware]\norder = [\"hooks\", \"validate\", \"permission\", \"auth\"]\n[middleware.hooks]\naudit_log = \"-\"\n")
		b.WriteString("[middleware.permission]\nread_only = true\n")
		if policy == policyAsk {
			b.WriteString("ask = true\n")
		}
	}
	return []byte(b.String())
}

// Notices of the driver flags' policies that do not ask.
const (
	noticeYes      = "mcs: --yes: every call of the --openapi, --fs and --csv drivers runs without asking, writes included (audited on stderr)"
	noticeReadOnly = "mcs: nobody can be asked here: reads of the --openapi, --fs and --csv drivers run, every other call is refused; --yes runs them unasked"
)
