package console

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/budget"
	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
	"github.com/mcs-go/mcs/stack"
)

// pageDef is one page of the console.
type pageDef struct {
	Path, Title string
	data        func(s *Server, r *http.Request, d mcs.Driver) any
}

var pages = []pageDef{
	{"tools", "Tools", (*Server).toolsData},
	{"prompt", "Prompt and budget", (*Server).promptData},
	{"process", "Process", nil},
	{"approvals", "Approvals", nil},
	{"audit", "Audit", nil},
	{"auth", "Auth", (*Server).authData},
	{"chat", "Chat", nil},
}

// pageData is what the layout renders.
type pageData struct {
	Page, Title string
	Nonce, CSRF string
	Pages       []pageDef
	StackFile   string
	Problems    []problem
	Chat        bool
	Data        any
}

// problem is one problem of a stack that failed to load or build.
type problem struct {
	File  string
	Line  int
	Table string
	Key   string
	Msg   string
}

// problems splits a build error into its stack file problems.
func (s *Server) problems(err error) []problem {
	if err == nil {
		return nil
	}
	var out []problem
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var se *stack.Error
		if errors.As(e, &se) {
			msg := ""
			if se.Err != nil {
				msg = se.Err.Error()
			}
			out = append(out, problem{File: se.File, Line: se.Line, Table: se.Table, Key: se.Key, Msg: s.red.Text(msg, nil)})
			return
		}
		out = append(out, problem{Msg: s.red.Text(e.Error(), nil)})
	}
	walk(err)
	return out
}

func (s *Server) page(p pageDef) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nonce := randomString(18)
		st, d, err := s.state()
		s.mu.Lock()
		chat := s.chat != nil
		s.mu.Unlock()
		pd := pageData{Page: p.Path, Title: p.Title, Nonce: nonce, CSRF: s.csrf(), Pages: pages, Problems: s.problems(err), Chat: chat}
		if st != nil {
			pd.StackFile = st.File
		}
		if p.data != nil && (d != nil || p.Path == "auth") {
			pd.Data = p.data(s, r, d)
		}
		var buf bytes.Buffer
		if err := s.tmpl.ExecuteTemplate(&buf, "layout", pd); err != nil {
			http.Error(w, "render the page: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Security-Policy", csp(nonce))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
	}
}

// toolView is a tool on the Tools page.
type toolView struct {
	Name, Title, Description string
	Badges                   []string
	Params                   []paramView
	Search                   string
}

// paramView is a field of a tool's form. Kind is "select" (an enum, or a
// boolean: true, false or unset), "number", "json" (arrays and objects: JSON,
// arrays also comma-separated) or "text".
type paramView struct {
	Name, Description, Type, Kind string
	Options                       []string
	Required                      bool
	Default                       string
}

type toolsPage struct {
	Tools []toolView
	Error string
}

func (s *Server) toolsData(r *http.Request, d mcs.Driver) any {
	td, ok := d.(mcs.ToolDriver)
	if !ok {
		return toolsPage{Error: "the stack's driver does not list its tools"}
	}
	tools, err := td.ListTools(r.Context())
	if err != nil {
		return toolsPage{Error: s.red.Text("list the tools: "+err.Error(), nil)}
	}
	out := toolsPage{}
	for _, t := range tools {
		tv := toolView{Name: t.Name, Title: s.red.Text(t.Title, nil), Description: s.red.Text(t.Description, nil), Badges: badges(t.Annotations)}
		for _, p := range t.Parameters {
			tv.Params = append(tv.Params, s.paramView(p))
		}
		tv.Search = strings.ToLower(t.Name + " " + t.Title + " " + t.Description)
		out.Tools = append(out.Tools, tv)
	}
	return out
}

func badges(a *mcs.ToolAnnotations) []string {
	if a == nil {
		return []string{"unknown effects"}
	}
	var out []string
	if a.ReadOnly {
		return append(out, "read-only")
	}
	if a.Destructive {
		out = append(out, "destructive")
	} else {
		out = append(out, "writes")
	}
	if a.Idempotent {
		out = append(out, "idempotent")
	}
	if a.OpenWorld {
		out = append(out, "open world")
	}
	return out
}

func (s *Server) paramView(p mcs.Parameter) paramView {
	desc := p.Description
	if desc == "" {
		desc, _ = p.Schema["description"].(string)
	}
	v := paramView{Name: p.Name, Description: s.red.Text(desc, nil), Type: calls.TypeHint(p.Schema), Required: p.Required, Kind: "text"}
	if def, ok := calls.DefaultHint(p.Schema); ok {
		v.Default = def
	}
	types := calls.SchemaTypes(p.Schema)
	enum, _ := p.Schema["enum"].([]any)
	switch {
	case len(enum) > 0:
		v.Kind = "select"
		for _, e := range enum {
			v.Options = append(v.Options, calls.Scalar(e))
		}
	case slices.Equal(types, []string{"boolean"}):
		v.Kind, v.Options = "select", []string{"true", "false"}
	case slices.Contains(types, "array") || slices.Contains(types, "object"):
		v.Kind = "json"
	case slices.Equal(types, []string{"integer"}) || slices.Equal(types, []string{"number"}):
		v.Kind = "number"
	}
	return v
}

type promptPage struct {
	Model         string
	Budget        budget.Budget
	System        string
	Native        bool
	NativeSystem  string
	NativeTools   string
	Error         string
	ModelExamples []string
}

// promptData measures the prompt for the model of the query (budget.Measure,
// as mcs tools --budget) and shows the system message and the native tools
// (as mcs prompt and mcs prompt --native) exactly as the model gets them: they
// are the stack's tool definitions, which the redaction of values would
// mangle (a parameter named "password" is a schema, not a secret).
func (s *Server) promptData(r *http.Request, d mcs.Driver) any {
	model := strings.TrimSpace(r.URL.Query().Get("model"))
	out := promptPage{Model: model, ModelExamples: []string{"gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash", "llama3.2"}}
	ctx := r.Context()
	b, err := budget.Measure(ctx, d, model)
	if err != nil {
		out.Error = s.red.Text(err.Error(), nil)
		return out
	}
	out.Budget = b
	if msg, err := d.SystemMessage(ctx, model); err == nil {
		out.System = msg
	}
	if n, ok := d.(mcs.SupportsNativeTools); ok {
		if ntc, err := n.NativeToolContext(ctx, model); err == nil && ntc.Tools != nil {
			out.Native = true
			out.NativeSystem = ntc.SystemMessage
			out.NativeTools = calls.Pretty(ntc.Tools)
		}
	}
	return out
}
