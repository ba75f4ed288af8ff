package mcs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

var floatType = reflect.TypeFor[float64]()

// Numbers in what a model writes decode to float64, as encoding/json decodes
// them, except integers that float64 cannot hold exactly: those stay the
// json.Number of their literal, so that a 64-bit id the model copied
// (1234567890123456789) reaches the tool as written instead of rounded to a
// neighbour (1234567890123456768). Drivers, validation and typed tools accept
// json.Number wherever they accept numbers.

// maxExactDigits is the longest run of digits every integer of which float64
// holds exactly (10^15 < 2^53).
const maxExactDigits = 15

// inexactInt reports whether lit, a JSON number literal that parsed to f, is an
// integer that f does not hold exactly.
func inexactInt(lit string, f float64) bool {
	digits := len(lit)
	if digits > 0 && lit[0] == '-' {
		digits--
	}
	if digits <= maxExactDigits {
		return false
	}
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return strconv.FormatFloat(f, 'f', -1, 64) != lit
}

// longDigitRun reports whether data holds more than maxExactDigits digits in a
// row: only then may a number in it need to stay a json.Number.
func longDigitRun(data []byte) bool {
	run := 0
	for _, c := range data {
		if c >= '0' && c <= '9' {
			if run++; run > maxExactDigits {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// unmarshalJSON is json.Unmarshal for what a model wrote: the same values and
// errors, except that an integer float64 cannot hold exactly stays a
// json.Number.
func unmarshalJSON(data []byte, v any) error {
	if !longDigitRun(data) {
		return json.Unmarshal(data, v)
	}
	if !json.Valid(data) {
		return json.Unmarshal(data, v) // encoding/json's own error
	}
	// data is exactly one JSON value now, so Decode reads all of it
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var err error
	switch p := v.(type) {
	case *map[string]any:
		if *p != nil {
			_, err = exactNumbers(*p)
		}
	case *any:
		*p, err = exactNumbers(*p)
	}
	return err
}

// exactNumbers replaces, in place, the json.Numbers of v by float64 except the
// integers float64 cannot hold exactly. A number float64 cannot hold at all
// (1e400) is an error, as json.Unmarshal reports it.
func exactNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, &json.UnmarshalTypeError{Value: "number " + string(x), Type: floatType}
		}
		if inexactInt(string(x), f) {
			return x, nil
		}
		return f, nil
	case map[string]any:
		for k, e := range x {
			n, err := exactNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := exactNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}
