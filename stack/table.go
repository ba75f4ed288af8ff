package stack

import (
	"errors"
	"fmt"
	"github.com/mcs-go/mcs/internal/toolname"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Error is a problem of a stack file: where it is (file, line, the key) and what
// to do about it. Every error of [Load] and [Parse] about the file's content is an
// *Error, or several joined with errors.Join; test with errors.As.
type Error struct {
	// File is the name of the stack file, as given to Load or Parse.
	File string
	// Line is the line of the offending key or table, from 1; 0 when unknown.
	Line int
	// Table names the table, such as `[[driver]] "pets"` or `[middleware.hooks]`;
	// "" for the top level.
	Table string
	// Key is the offending key within Table; "" when the table itself is at fault.
	Key string
	// Err says what is wrong and what to do.
	Err error
}

// Error renders the problem on one line: "mcs.toml:7: [[driver]] "pets", key
// "spec": ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	switch {
	case e.Table != "" && e.Key != "":
		fmt.Fprintf(&b, "%s, key %q: ", e.Table, e.Key)
	case e.Table != "":
		b.WriteString(e.Table + ": ")
	case e.Key != "":
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Table is one table of a stack file, handed to the registry entry that decodes
// it (a [DriverType] or a [MiddlewareKind]). Its getters read one key each,
// check its type and record a positioned [*Error] when it is wrong; [Table.Err]
// returns what was recorded, plus an error for every key no getter asked for, so
// a misspelt key is never silently ignored. A getter of an absent key returns the
// zero value. A Table is not safe for concurrent use.
type Table struct {
	file   string
	dir    string // directory relative paths resolve against
	path   string // position path, such as "driver[1]"
	name   string // shown name, such as `[[driver]] "pets"`
	values map[string]any
	pos    positions
	asked  map[string]bool
	errs   []error
}

func newTable(file, dir, path, name string, values map[string]any, pos positions) *Table {
	if values == nil {
		values = map[string]any{}
	}
	return &Table{file: file, dir: dir, path: path, name: name, values: values, pos: pos, asked: map[string]bool{}}
}

// Name returns how messages name the table, such as `[[driver]] "pets"`.
func (t *Table) Name() string { return t.name }

// Dir returns the directory relative paths in the table resolve against: the
// directory of the stack file.
func (t *Table) Dir() string { return t.dir }

// Has reports whether key is set. It counts as asking for key.
func (t *Table) Has(key string) bool {
	t.asked[key] = true
	_, ok := t.values[key]
	return ok
}

// Errorf records a problem of key ("" for the table itself); the message says
// what is wrong and what to do.
func (t *Table) Errorf(key, format string, args ...any) {
	t.asked[key] = true
	t.errs = append(t.errs, t.errorAt(key, fmt.Errorf(format, args...)))
}

func (t *Table) errorAt(key string, err error) *Error {
	p := t.path
	if key != "" {
		p = join(p, key)
	}
	return &Error{File: t.file, Line: t.pos.line(p), Table: t.name, Key: key, Err: err}
}

// String returns the string at key.
func (t *Table) String(key string) string {
	v, ok := t.get(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		t.Errorf(key, "must be a string, such as %s = \"...\" (got %s)", key, describe(v))
	}
	return s
}

// Strings returns the array of strings at key; a single string is accepted as a
// list of one.
func (t *Table) Strings(key string) []string {
	v, ok := t.get(key)
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				t.Errorf(key, "element %d must be a string (got %s)", i+1, describe(e))
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	t.Errorf(key, "must be an array of strings, such as %s = [\"a\", \"b\"] (got %s)", key, describe(v))
	return nil
}

// Bool returns the boolean at key.
func (t *Table) Bool(key string) bool {
	v, ok := t.get(key)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		t.Errorf(key, "must be true or false (got %s)", describe(v))
	}
	return b
}

// Int returns the integer at key, which must lie in [lo, hi].
func (t *Table) Int(key string, lo, hi int64) int64 {
	v, ok := t.get(key)
	if !ok {
		return 0
	}
	n, ok := v.(int64)
	if !ok {
		t.Errorf(key, "must be an integer (got %s)", describe(v))
		return 0
	}
	if n < lo || n > hi {
		t.Errorf(key, "is %d; use a value from %d to %d", n, lo, hi)
		return 0
	}
	return n
}

// Duration returns the duration at key, written as a Go duration string such
// as "30s" or "1m30s". Negative durations are refused.
func (t *Table) Duration(key string) time.Duration {
	s := t.String(key)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		t.Errorf(key, "%q is not a duration; write one such as \"30s\" or \"2m\"", s)
		return 0
	}
	return d
}

// Path returns the file path at key, resolved against [Table.Dir] when it is
// relative. An http(s) URL is returned unchanged.
func (t *Table) Path(key string) string {
	s := t.String(key)
	if s == "" || isURL(s) || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(t.dir, s)
}

// StringMap returns the table of strings at key (an inline table such as
// headers = {X-Team = "core"}).
func (t *Table) StringMap(key string) map[string]string {
	v, ok := t.get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf(key, "must be a table of strings, such as %s = {Name = \"value\"} (got %s)", key, describe(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) { // problems in a stable order
		e := m[k]
		s, ok := e.(string)
		if !ok {
			t.Errorf(key, "entry %q must be a string (got %s)", k, describe(e))
			continue
		}
		out[k] = s
	}
	return out
}

// Sub returns the table at key as a Table of its own, named name in messages;
// an absent key gives an empty table. Its errors are reported by this table's
// Err.
func (t *Table) Sub(key, name string) *Table {
	v, ok := t.get(key)
	m, isMap := v.(map[string]any)
	if ok && !isMap {
		t.Errorf(key, "must be a table (got %s)", describe(v))
	}
	s := newTable(t.file, t.dir, join(t.path, key), name, m, t.pos)
	t.errs = append(t.errs, &subErr{s})
	return s
}

// subErr stands in t.errs for the errors of a sub-table, read when Err is called.
type subErr struct{ t *Table }

func (e *subErr) Error() string { return "" }

// Err returns the problems recorded so far, joined, followed by one for every key
// of the table no getter asked for; nil when there are none. Call it last.
func (t *Table) Err() error {
	var errs []error
	for _, e := range t.errs {
		if s, ok := e.(*subErr); ok {
			if err := s.t.Err(); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, e)
	}
	var unknown []string
	for k := range t.values {
		if !t.asked[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	if len(unknown) > 0 {
		known := make([]string, 0, len(t.asked))
		for k := range t.asked {
			if k != "" {
				known = append(known, k)
			}
		}
		slices.Sort(known)
		for _, k := range unknown {
			hint := ""
			if near := nearest(k, known); near != "" {
				hint = fmt.Sprintf(" did you mean %q?", near)
			}
			errs = append(errs, t.errorAt(k, fmt.Errorf("unknown key;%s the keys here are %s", hint, strings.Join(known, ", "))))
		}
	}
	return errors.Join(errs...)
}

func (t *Table) get(key string) (any, bool) {
	t.asked[key] = true
	v, ok := t.values[key]
	return v, ok
}

// describe names a decoded TOML value's type for messages, without its content
// (which may be a secret).
func describe(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	default:
		return "a date or time"
	}
}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// nearest returns the candidate within two edits of s (the first of the
// closest), or "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := toolname.Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
