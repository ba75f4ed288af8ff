package main

import (
	"fmt"
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
		fmt.Fprintf(&b, "[[driver]]\nlabel = %s\ntype = %s\n", tomlString(label), tomlString(typ))
		for i := 0; i+1 < len(keys); i += 2 {
			fmt.Fprintf(&b, "%s = %s\n", keys[i], keys[i+1])
		}
	}
	for i, spec := range openapi {
		keys := []string{"spec", tomlString(spec)}
		if baseURL != "" {
			keys = append(keys, "base_url", tomlString(baseURL))
		}
		add("api", i, "rest", keys...)
	}
	for i, dir := range fs {
		add("files", i, "filesystem", "root", tomlString(dir), "read_only", "true")
	}
	for i, dir := range csv {
		add("csv", i, "csv", "root", tomlString(dir))
	}
	return []byte(b.String())
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
