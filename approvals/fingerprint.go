package approvals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mcs-go/mcs"
)

// Fingerprint returns the hex SHA-256 that binds an approval to one exact call:
// the driver's label, the tool's definition (name, title, description, and each
// parameter's name, description, requiredness and schema) and the call's
// arguments as canonical JSON (object keys sorted at every depth, numbers as
// they came: a json.Number keeps its digits). A different label, a changed
// definition or different arguments give a different fingerprint; arguments
// read back from a store give the same one. Annotations are hints and not part
// of the fingerprint. Values that do not encode as JSON are hashed by their
// error text, so they never match a call that encodes.
func Fingerprint(label string, tool mcs.Tool, args map[string]any) string {
	type param struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Required    bool           `json:"required"`
		Schema      map[string]any `json:"schema"`
	}
	def := struct {
		Name        string  `json:"name"`
		Title       string  `json:"title"`
		Description string  `json:"description"`
		Parameters  []param `json:"parameters"`
	}{Name: tool.Name, Title: tool.Title, Description: tool.Description, Parameters: make([]param, 0, len(tool.Parameters))}
	for _, p := range tool.Parameters {
		def.Parameters = append(def.Parameters, param{p.Name, p.Description, p.Required, p.Schema})
	}
	h := sha256.New()
	// Each part is written as one JSON value followed by a newline, so no part
	// can run into the next.
	writePart(h, label)
	writePart(h, def)
	writePart(h, args)
	return hex.EncodeToString(h.Sum(nil))
}

func writePart(w interface{ Write([]byte) (int, error) }, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // maps encode with sorted keys; Encode ends with a newline
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		buf.WriteString("!error ")
		buf.WriteString(err.Error())
		buf.WriteByte('\n')
	}
	_, _ = w.Write(buf.Bytes())
}
