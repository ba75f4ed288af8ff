package rest

import (
	"errors"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest/internal/cachejson"
)

// The decoder of cache files.
//
// A warm start is dominated by decoding the listing, most of it parameter
// schemas, into generic values; encoding/json's reflection-driven decoding
// took three quarters of it. parseCacheFile decodes the file with package
// cachejson, which validates it (RFC 8259 syntax, no duplicate keys, nesting
// within the standard library's limit) and builds the values directly, and maps
// the values onto cacheFile. A file that is not valid UTF-8, has a member of the
// wrong type, an unknown member or a number out of range is refused.

var errBadCache = errors.New("the cache file is not a valid entry")

// parseCacheFile decodes a cache file.
func parseCacheFile(data []byte) (*cacheFile, error) {
	v, err := cachejson.Decode(data)
	if err != nil {
		return nil, errBadCache
	}
	return cacheFileFrom(v)
}

// cacheFileFrom maps the decoded file onto cacheFile, refusing unknown
// members and members of the wrong type.
func cacheFileFrom(v any) (*cacheFile, error) {
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errBadCache
	}
	cf := &cacheFile{}
	for k, x := range top {
		var ok bool
		switch k {
		case "Format":
			var f float64
			f, ok = x.(float64)
			cf.Format = int(f)
			ok = ok && float64(cf.Format) == f
		case "Build":
			cf.Build, ok = x.(string)
		case "SpecSHA256":
			cf.SpecSHA256, ok = x.(string)
		case "Tags":
			cf.Tags, ok = stringList(x)
		case "Paths":
			cf.Paths, ok = stringList(x)
		case "Tools":
			cf.Tools, ok = toolList(x)
		case "Secured":
			cf.Secured, ok = x.(bool)
		}
		if !ok {
			return nil, errBadCache
		}
	}
	return cf, nil
}

func stringList(x any) ([]string, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func toolList(x any) ([]mcs.Tool, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]mcs.Tool, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		t := &out[i]
		for k, x := range m {
			switch k {
			case "Name":
				t.Name, ok = x.(string)
			case "Title":
				t.Title, ok = x.(string)
			case "Description":
				t.Description, ok = x.(string)
			case "Parameters":
				t.Parameters, ok = parameterList(x)
			case "Annotations":
				t.Annotations, ok = annotations(x)
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
		}
	}
	return out, true
}

func parameterList(x any) ([]mcs.Parameter, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]mcs.Parameter, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		p := &out[i]
		for k, x := range m {
			switch k {
			case "Name":
				p.Name, ok = x.(string)
			case "Description":
				p.Description, ok = x.(string)
			case "Required":
				p.Required, ok = x.(bool)
			case "Schema":
				if x != nil {
					p.Schema, ok = x.(map[string]any)
				}
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
		}
	}
	return out, true
}

func annotations(x any) (*mcs.ToolAnnotations, bool) {
	if x == nil {
		return nil, true
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, false
	}
	a := &mcs.ToolAnnotations{}
	for k, x := range m {
		switch k {
		case "ReadOnly":
			a.ReadOnly, ok = x.(bool)
		case "Destructive":
			a.Destructive, ok = x.(bool)
		case "Idempotent":
			a.Idempotent, ok = x.(bool)
		case "OpenWorld":
			a.OpenWorld, ok = x.(bool)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return a, true
}
