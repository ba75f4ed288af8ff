package validate

import (
	"encoding/json"
	"math"
	"math/big"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path. The library's validator allocates for every value it visits
// (its scope, the instance path, big.Rat for every number), which is most of the
// cost of a call. A valid call is by far the common case, so each compiled schema
// also gets a fastNode: a predicate over the keywords tool schemas use (type,
// enum, const, bounds, lengths, pattern, format, properties, required,
// additionalProperties, items, allOf/anyOf/oneOf/not, local $ref) that answers
// valid, invalid or unknown without allocating. Only "valid" skips the library;
// anything else is checked by the library, which also describes the problems, so
// the fast path decides nothing the library would decide differently. Its answers
// are exact in both directions (not and oneOf negate them); a schema or value it
// does not cover gives unknown.

type verdict uint8

const (
	unknown verdict = iota
	valid
	invalid
)

// fastNode is the fast form of one compiled schema; nil means not covered.
type fastNode struct {
	boolean *bool
	types   typeSet // 0: any
	enum    []fastValue
	hasEnum bool

	min, max, exMin, exMax *float64
	minLen, maxLen         int // -1: none
	pattern                jsonschema.Regexp
	format                 *jsonschema.Format

	props         map[string]*fastNode
	required      []string
	additional    *fastNode // when additionalMode == 2
	additionalOff bool      // additionalProperties: false
	minProps      int       // -1: none
	maxProps      int
	items         *fastNode
	minItems      int // -1: none
	maxItems      int

	ref               *fastNode
	allOf, anyOf, one []*fastNode
	not               *fastNode
}

// fastValue is an enum or const member the fast path can compare: a string, a
// boolean, null, or a number exactly representable as float64.
type fastValue struct {
	kind typeSet
	s    string
	b    bool
	f    float64
}

type fastBuilder struct {
	memo map[*jsonschema.Schema]*fastNode
	bad  map[*jsonschema.Schema]bool
}

// buildFast returns the fast form of s, or nil when s uses a keyword the fast
// path does not cover.
func buildFast(s *jsonschema.Schema) *fastNode {
	b := fastBuilder{memo: map[*jsonschema.Schema]*fastNode{}, bad: map[*jsonschema.Schema]bool{}}
	n := b.build(s, 0)
	if n == nil || len(b.bad) > 0 {
		return nil
	}
	return n
}

func (b *fastBuilder) fail(s *jsonschema.Schema) *fastNode {
	b.bad[s] = true
	return nil
}

func (b *fastBuilder) build(s *jsonschema.Schema, depth int) *fastNode {
	if s == nil {
		return nil
	}
	if n, ok := b.memo[s]; ok {
		return n // a reference cycle: the node is being built or done
	}
	if depth > 64 {
		return b.fail(s)
	}
	n := &fastNode{minLen: -1, maxLen: -1, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1}
	b.memo[s] = n
	if s.Bool != nil {
		n.boolean = s.Bool
		return n
	}
	if s.RecursiveRef != nil || s.DynamicRef != nil || s.If != nil || s.Then != nil || s.Else != nil ||
		s.PropertyNames != nil || len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MultipleOf != nil || len(s.Extensions) > 0 {
		return b.fail(s)
	}
	if s.Types != nil && !s.Types.IsEmpty() {
		for _, t := range s.Types.ToStrings() {
			n.types |= typeBit(t)
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum.Values {
			fv, ok := toFastValue(v)
			if !ok {
				return b.fail(s)
			}
			n.enum = append(n.enum, fv)
		}
	}
	if s.Const != nil {
		fv, ok := toFastValue(*s.Const)
		if !ok {
			return b.fail(s)
		}
		n.hasEnum = true
		n.enum = []fastValue{fv}
	}
	for _, r := range [...]struct {
		src *big.Rat
		dst **float64
	}{{s.Minimum, &n.min}, {s.Maximum, &n.max}, {s.ExclusiveMinimum, &n.exMin}, {s.ExclusiveMaximum, &n.exMax}} {
		if r.src == nil {
			continue
		}
		f, exact := r.src.Float64()
		if !exact {
			return b.fail(s)
		}
		*r.dst = &f
	}
	intp := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	n.minLen, n.maxLen = intp(s.MinLength), intp(s.MaxLength)
	n.minProps, n.maxProps = intp(s.MinProperties), intp(s.MaxProperties)
	n.minItems, n.maxItems = intp(s.MinItems), intp(s.MaxItems)
	n.pattern = s.Pattern
	n.format = s.Format
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for k, sub := range s.Properties {
			if n.props[k] = b.build(sub, depth+1); n.props[k] == nil {
				return b.fail(s)
			}
		}
	}
	n.required = s.Required
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		n.additionalOff = !a
	case *jsonschema.Schema:
		if n.additional = b.build(a, depth+1); n.additional == nil {
			return b.fail(s)
		}
	default:
		return b.fail(s)
	}
	items := s.Items2020
	if s.DraftVersion < 2020 {
		switch it := s.Items.(type) {
		case nil:
		case *jsonschema.Schema:
			items = it
		default:
			return b.fail(s) // the tuple form
		}
	}
	if items != nil {
		if n.items = b.build(items, depth+1); n.items == nil {
			return b.fail(s)
		}
	}
	if s.Ref != nil {
		if n.ref = b.build(s.Ref, depth+1); n.ref == nil {
			return b.fail(s)
		}
	}
	list := func(l []*jsonschema.Schema) ([]*fastNode, bool) {
		out := make([]*fastNode, 0, len(l))
		for _, sub := range l {
			f := b.build(sub, depth+1)
			if f == nil {
				return nil, false
			}
			out = append(out, f)
		}
		return out, true
	}
	var ok bool
	if n.allOf, ok = list(s.AllOf); !ok {
		return b.fail(s)
	}
	if n.anyOf, ok = list(s.AnyOf); !ok {
		return b.fail(s)
	}
	if n.one, ok = list(s.OneOf); !ok {
		return b.fail(s)
	}
	if s.Not != nil {
		if n.not = b.build(s.Not, depth+1); n.not == nil {
			return b.fail(s)
		}
	}
	return n
}

func toFastValue(v any) (fastValue, bool) {
	switch x := v.(type) {
	case nil:
		return fastValue{kind: tNull}, true
	case string:
		return fastValue{kind: tString, s: x}, true
	case bool:
		return fastValue{kind: tBoolean, b: x}, true
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return fastValue{}, false
		}
		f, exact := r.Float64()
		if !exact {
			return fastValue{}, false
		}
		return fastValue{kind: tNumber, f: f}, true
	case float64:
		return fastValue{kind: tNumber, f: x}, true
	}
	return fastValue{}, false
}

// number returns v as float64 when v is a number the fast path reads exactly.
func fastNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int:
		if x > -1<<53 && x < 1<<53 {
			return float64(x), true
		}
	case int64:
		if x > -1<<53 && x < 1<<53 {
			return float64(x), true
		}
	}
	return 0, false
}

// check returns the verdict of v under n: the verdicts of the keyword families,
// each checked by a method of its own, combined (invalid wins, then unknown).
func (n *fastNode) check(v any, depth int) verdict {
	if depth > 64 {
		return unknown
	}
	if n.boolean != nil {
		if *n.boolean {
			return valid
		}
		return invalid
	}
	t, f, ok := kindOf(v)
	if !ok {
		return unknown
	}
	if n.types != 0 && n.types&t == 0 {
		return invalid
	}
	if n.hasEnum && !n.inEnum(v, t, f) {
		return invalid
	}
	res := valid
	switch t {
	case tString:
		if n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil {
			res = n.checkString(v.(string))
		}
	case tObject:
		res = n.checkObject(v.(map[string]any), depth)
	case tArray:
		res = n.checkArray(v.([]any), depth)
	case tNull, tBoolean:
	default:
		res = n.checkNumber(t, f)
	}
	if res == invalid {
		return invalid
	}
	if n.format != nil && n.format.Validate(v) != nil {
		return invalid
	}
	if n.ref == nil && n.allOf == nil && n.anyOf == nil && n.one == nil && n.not == nil {
		return res // the common case: no call
	}
	return both(res, n.checkApplicators(v, depth))
}

// both combines two verdicts on one value: invalid wins, then unknown.
func both(a, b verdict) verdict {
	switch {
	case a == invalid || b == invalid:
		return invalid
	case a == unknown || b == unknown:
		return unknown
	}
	return valid
}

// kindOf returns the JSON type of v, and its value when it is a number; ok is
// false for a value the fast path does not cover.
func kindOf(v any) (t typeSet, f float64, ok bool) {
	switch x := v.(type) {
	case nil:
		return tNull, 0, true
	case bool:
		return tBoolean, 0, true
	case string:
		return tString, 0, true
	case map[string]any:
		return tObject, 0, true
	case []any:
		return tArray, 0, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, 0, false
		}
		f = x
	default:
		if f, ok = fastNumber(v); !ok {
			return 0, 0, false
		}
	}
	t = tNumber
	if f == math.Trunc(f) {
		t |= tInteger
	}
	return t, f, true
}

// checkString checks minLength, maxLength and pattern.
func (n *fastNode) checkString(x string) verdict {
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(x)
		if (n.minLen >= 0 && l < n.minLen) || (n.maxLen >= 0 && l > n.maxLen) {
			return invalid
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		return invalid
	}
	return valid
}

// checkNumber checks the bounds of a number (t holds tNumber for one).
func (n *fastNode) checkNumber(t typeSet, f float64) verdict {
	if t&tNumber != 0 && ((n.min != nil && f < *n.min) || (n.max != nil && f > *n.max) ||
		(n.exMin != nil && f <= *n.exMin) || (n.exMax != nil && f >= *n.exMax)) {
		return invalid
	}
	return valid
}

// checkObject checks minProperties, maxProperties, required, properties and
// additionalProperties.
func (n *fastNode) checkObject(x map[string]any, depth int) verdict {
	if (n.minProps >= 0 && len(x) < n.minProps) || (n.maxProps >= 0 && len(x) > n.maxProps) {
		return invalid
	}
	for _, r := range n.required {
		if _, ok := x[r]; !ok {
			return invalid
		}
	}
	res := valid
	for k, e := range x {
		sub := n.additional
		if p, ok := n.props[k]; ok {
			sub = p
		} else if n.additionalOff {
			return invalid
		}
		if sub == nil {
			continue
		}
		if res = both(res, sub.check(e, depth+1)); res == invalid {
			return invalid
		}
	}
	return res
}

// checkArray checks minItems, maxItems and items.
func (n *fastNode) checkArray(x []any, depth int) verdict {
	if (n.minItems >= 0 && len(x) < n.minItems) || (n.maxItems >= 0 && len(x) > n.maxItems) {
		return invalid
	}
	res := valid
	if n.items != nil {
		for _, e := range x {
			if res = both(res, n.items.check(e, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	return res
}

// checkApplicators checks $ref, allOf, anyOf, oneOf and not.
func (n *fastNode) checkApplicators(v any, depth int) verdict {
	res := valid
	if n.ref != nil {
		if res = n.ref.check(v, depth+1); res == invalid {
			return invalid
		}
	}
	for _, s := range n.allOf {
		if res = both(res, s.check(v, depth+1)); res == invalid {
			return invalid
		}
	}
	if len(n.anyOf) > 0 {
		if res = both(res, n.checkAnyOf(v, depth)); res == invalid {
			return invalid
		}
	}
	if len(n.one) > 0 {
		if res = both(res, n.checkOneOf(v, depth)); res == invalid {
			return invalid
		}
	}
	if n.not != nil {
		switch n.not.check(v, depth+1) {
		case valid:
			return invalid
		case unknown:
			res = both(res, unknown)
		}
	}
	return res
}

// checkAnyOf is valid when one subschema is, invalid when every one is.
func (n *fastNode) checkAnyOf(v any, depth int) verdict {
	r := invalid
	for _, s := range n.anyOf {
		switch s.check(v, depth+1) {
		case valid:
			return valid
		case unknown:
			r = unknown
		}
	}
	return r
}

// checkOneOf is valid when exactly one subschema is and no other is unsure.
func (n *fastNode) checkOneOf(v any, depth int) verdict {
	matched, unsure := 0, false
	for _, s := range n.one {
		switch s.check(v, depth+1) {
		case valid:
			matched++
		case unknown:
			unsure = true
		}
	}
	switch {
	case matched > 1:
		return invalid
	case unsure:
		return unknown
	case matched == 0:
		return invalid
	}
	return valid
}

func (n *fastNode) inEnum(v any, t typeSet, f float64) bool {
	for _, e := range n.enum {
		switch {
		case e.kind == tNull && t == tNull:
			return true
		case e.kind == tString && t == tString && e.s == v.(string):
			return true
		case e.kind == tBoolean && t == tBoolean && e.b == v.(bool):
			return true
		case e.kind == tNumber && t&tNumber != 0 && e.f == f:
			return true
		}
	}
	return false
}
