package main

import (
	"fmt"
	"github.com/mcs-go/mcs/cmd/mcs/internal/tomlstr"
	"strings"
)

// shortcutStack writes the stack file the driver flags declare: one REST driver
// per --openapi (labelled api, api-2, ...), one read-only filesystem driver per
// --fs (files, files-2, ...), one CSV driver per --csv (csv, csv-2, ...). Paths
// are taken as given, relative to the current directory.
func shortcutStack(openapi, fs, csv []string, baseURL string) []byte {
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
	return []byte(b.String())
}
