package mcs

import (
	"errors"
	"fmt"
	"strings"
)

// Parameter describes one argument of a [Tool].
type Parameter struct {
	// Name is the argument name the model must use.
	Name string
	// Description explains the argument; when set it overrides a description in Schema.
	Description string
	// Required reports whether the model must supply the argument.
	Required bool
	// Schema is a JSON Schema fragment for the argument's value. A nil Schema renders
	// as {"type":"string"}.
	Schema map[string]any
}

// Tool describes one function a driver publishes to the model.
type Tool struct {
	// Name is the machine name the model uses to call the tool.
	Name string
	// Title is an optional short human-readable name.
	Title string
	// Description tells the model what the tool does; when empty, Title is used.
	Description string
	// Parameters are the tool's arguments, in the order they are presented.
	Parameters []Parameter
	// Annotations are behaviour hints for the client (consent policies, a UI); they
	// are never sent to the model. Nil means nothing is known: treat the tool as
	// possibly destructive and not read-only.
	Annotations *ToolAnnotations
}

// ToolAnnotations are hints about what a tool does, in the sense of MCP's tool
// annotations. Drivers derive them from what they know (REST from the HTTP method,
// the file drivers from the tool); they are hints, not guarantees, so a client that
// must be safe with a hostile driver does not rely on them.
type ToolAnnotations struct {
	// ReadOnly reports that the tool does not change its environment.
	ReadOnly bool
	// Destructive reports that the tool may delete or overwrite (meaningful only when
	// ReadOnly is false).
	Destructive bool
	// Idempotent reports that calling the tool twice with the same arguments has no
	// further effect (meaningful only when ReadOnly is false).
	Idempotent bool
	// OpenWorld reports that the tool reaches an open set of external entities (the
	// web), rather than a closed domain.
	OpenWorld bool
}

// Clone returns a deep copy of t: its parameters, their schemas (as [CloneArgs]
// copies them) and its annotations are its own, so a caller may change the copy
// without changing a driver's listing.
func (t Tool) Clone() Tool {
	if t.Parameters != nil {
		ps := make([]Parameter, len(t.Parameters))
		for i, p := range t.Parameters {
			p.Schema = CloneArgs(p.Schema)
			ps[i] = p
		}
		t.Parameters = ps
	}
	if t.Annotations != nil {
		a := *t.Annotations
		t.Annotations = &a
	}
	return t
}

// Summary returns the text that describes the tool to the model: Description, or
// Title when Description is empty.
func (t Tool) Summary() string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}

// ErrInvalidTool is wrapped by every error [Tool.Validate] returns.
var ErrInvalidTool = errors.New("invalid tool")

// Validate reports whether t can be published: the name must be set and at least one
// of Title and Description must be set. Parameter names must be set and unique. The
// error wraps [ErrInvalidTool] and names what is missing.
func (t Tool) Validate() error {
	if strings.TrimSpace(t.Name) == "" {
		return fmt.Errorf("%w: name is empty; set Tool.Name", ErrInvalidTool)
	}
	if strings.TrimSpace(t.Title) == "" && strings.TrimSpace(t.Description) == "" {
		return fmt.Errorf("%w: tool %q has neither title nor description; set at least one", ErrInvalidTool, t.Name)
	}
	seen := make(map[string]bool, len(t.Parameters))
	for i, p := range t.Parameters {
		if strings.TrimSpace(p.Name) == "" {
			return fmt.Errorf("%w: tool %q: parameter %d has no name", ErrInvalidTool, t.Name, i)
		}
		if seen[p.Name] {
			return fmt.Errorf("%w: tool %q: parameter %q is declared twice", ErrInvalidTool, t.Name, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}
