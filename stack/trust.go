package stack

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcs-go/mcs/middleware/auth"
)

// EffectKind is a kind of [Effect].
type EffectKind string

// The kinds of effects a stack declares.
const (
	// EffectProcess: Build starts a program (an MCP server over stdio).
	EffectProcess EffectKind = "process"
	// EffectWrite: the built stack writes the file or directory Path (an audit
	// log, a token store, a tool-table cache, the root of a writable filesystem
	// driver).
	EffectWrite EffectKind = "write"
	// EffectCredential: a driver sends one of the user's credentials (Env names
	// the environment variables, Path the credentials mode) to the hosts the file
	// names; a file the user did not choose could name its own host, or a label
	// whose variable holds another service's token.
	EffectCredential EffectKind = "credential"
	// EffectStore: the built stack keeps the tokens of its sign-ins in the
	// database Path names (a PostgreSQL or Redis URL, its password hidden) on a
	// host the file chooses, and sends it the password of Env; whoever runs
	// that host can read the tokens (unless MCS_TOKEN_KEY seals them).
	EffectStore EffectKind = "store"
	// EffectUnknown: a driver type or middleware kind registered by the program
	// that does not report its effects; assume it may do anything.
	EffectUnknown EffectKind = "unknown"
)

// Effect is something a built stack does on the machine beyond the reads and
// requests its drivers make: a program it starts or a file it writes. A program
// deciding whether to build a stack file it did not choose (one it found in the
// current directory) shows them and asks first; see [Stack.Effects].
type Effect struct {
	// Kind is what the stack does.
	Kind EffectKind
	// Table is the table that declares it, such as `[[driver]] "gh"` or
	// `[middleware.hooks]`.
	Table string
	// Line is the line of a [[driver]] table; 0 for a middleware table.
	Line int
	// Command is the program and its arguments (EffectProcess).
	Command []string
	// Path is the file or directory written (EffectWrite), or the working
	// directory of the program (EffectProcess; "" when it inherits this
	// program's), as the stack file's relative paths resolve.
	Path string
	// Env names the variables the program gets beyond the inherited basics:
	// those the table sets (env) and those it copies from this program's
	// environment (env_pass). Names only, never values.
	Env []string
}

// String describes the effect on one line, such as `[[driver]] "gh" (line 3)
// starts ["npx", "-y", "server"]`.
func (e Effect) String() string {
	where := e.Table
	if e.Line > 0 {
		where += fmt.Sprintf(" (line %d)", e.Line)
	}
	switch e.Kind {
	case EffectProcess:
		s := fmt.Sprintf("%s starts %q", where, e.Command)
		if e.Path != "" {
			s += " in " + e.Path
		}
		if len(e.Env) > 0 {
			s += " with " + strings.Join(e.Env, ", ")
		}
		return s
	case EffectWrite:
		return fmt.Sprintf("%s writes %s", where, e.Path)
	case EffectStore:
		s := fmt.Sprintf("%s keeps the tokens of its sign-ins in %s", where, e.Path)
		if len(e.Env) > 0 {
			s += " and sends it " + strings.Join(e.Env, ", ")
		}
		return s
	case EffectCredential:
		if e.Path == "" {
			return fmt.Sprintf("%s sends %s to the hosts it names", where, strings.Join(e.Env, ", "))
		}
		if len(e.Env) == 0 {
			return fmt.Sprintf("%s sends the token of a sign-in (credentials = %q) to the hosts it names", where, e.Path)
		}
		return fmt.Sprintf("%s sends %s (credentials = %q) to the hosts it names", where, strings.Join(e.Env, ", "), e.Path)
	}
	return where + " is of a kind whose effects are unknown"
}

// effecter is implemented by the decoded configurations that report their
// effects.
type effecter interface {
	effects(e Effect) []Effect
}

// Effects returns the programs the stack starts and the files it writes, in
// file order, drivers first: MCP servers with a command, the audit log of
// [middleware.hooks] (not "-"), REST token stores and tool-table cache
// directories (cache_dir; the default cache, under the user's cache directory,
// is not reported), the roots of filesystem drivers that are not read-only, and
// the credentials REST and MCP drivers send (EffectCredential), then the file
// of an SQLite approval store (EffectWrite) or, for a PostgreSQL one, the
// password the client sends from PGPASSWORD (EffectCredential), then the token
// store of the [auth] table. A token store (token_store, [auth]) is an
// EffectWrite of its file, or an EffectStore for a PostgreSQL or Redis database.
// A driver type or middleware kind the program registered that does not report
// its effects is an EffectUnknown. Nothing is opened or started. Safe to call
// before or after Build.
func (s *Stack) Effects() []Effect {
	var out []Effect
	for _, d := range s.Drivers {
		e := Effect{Table: fmt.Sprintf("[[driver]] %q", d.Label), Line: d.Line}
		out = append(out, effectsOf(d.Config, e)...)
	}
	for i, mc := range s.mws {
		name := "middleware"
		if i < len(s.Middleware) {
			name = s.Middleware[i]
		}
		out = append(out, effectsOf(mc, Effect{Table: "[middleware." + name + "]"})...)
	}
	if s.Approvals != nil {
		out = append(out, s.Approvals.effects(Effect{})...)
	}
	if s.auth.store != "" {
		out = append(out, tokenStoreEffect(s.auth.store, Effect{Table: "[auth]"})...)
	}
	return out
}

// tokenStoreEffect is the effect of keeping tokens in the store of URL u: a
// file written, or a database on another host.
func tokenStoreEffect(u string, e Effect) []Effect {
	if p := storePath(u); p != "" {
		e.Kind, e.Path = EffectWrite, p
		return []Effect{e}
	}
	scheme, _, _ := strings.Cut(u, ":")
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		e.Env = []string{"PGPASSWORD"}
	case "redis", "rediss":
		e.Env = []string{"REDISCLI_AUTH"}
	default:
		return nil // memory: nothing leaves the process
	}
	e.Kind, e.Path = EffectStore, auth.RedactURL(u)
	return []Effect{e}
}

func effectsOf(v any, e Effect) []Effect {
	if ef, ok := v.(effecter); ok {
		return ef.effects(e)
	}
	if v == nil {
		return nil
	}
	e.Kind = EffectUnknown
	return []Effect{e}
}

func (d *mcpDriver) effects(e Effect) []Effect {
	if len(d.cfg.Command) == 0 {
		if d.creds != nil {
			c := e
			c.Kind, c.Path = EffectCredential, credentialsOAuth
			out := []Effect{c}
			if d.creds.store != "" {
				out = append(out, tokenStoreEffect(d.creds.store, e)...)
			}
			return out
		}
		if d.bearer {
			e.Kind, e.Path, e.Env = EffectCredential, credentialsEnv, []string{auth.EnvVarName(d.label)}
			return []Effect{e}
		}
		return nil
	}
	e.Kind, e.Command, e.Path = EffectProcess, slices.Clone(d.cfg.Command), d.cfg.Dir
	names := map[string]bool{}
	for _, kv := range d.cfg.Env {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	for _, k := range d.envPass {
		names[k] = true
	}
	e.Env = slices.Sorted(maps.Keys(names))
	return []Effect{e}
}

func (d *restDriver) effects(e Effect) []Effect {
	var out []Effect
	switch mode := d.creds.mode; mode {
	case "", credentialsNone:
	case credentialsEnv:
		names := map[string]bool{auth.EnvVarName(d.creds.label): true}
		for _, scope := range d.creds.scopes {
			names[auth.EnvVarName(scope)] = true
		}
		c := e
		c.Kind, c.Path, c.Env = EffectCredential, mode, slices.Sorted(maps.Keys(names))
		out = append(out, c)
	default:
		c := e
		c.Kind, c.Path = EffectCredential, mode
		out = append(out, c)
	}
	if d.creds.store != "" {
		out = append(out, tokenStoreEffect(d.creds.store, e)...)
	}
	if d.cfg.CacheDir != "" {
		e.Kind, e.Path = EffectWrite, d.cfg.CacheDir
		out = append(out, e)
	}
	return out
}

func (d *filesystemDriver) effects(e Effect) []Effect {
	if d.cfg.ReadOnly {
		return nil
	}
	e.Kind, e.Path = EffectWrite, d.cfg.Root
	return []Effect{e}
}

func (*csvDriver) effects(Effect) []Effect { return nil }

func (c *hooksConfig) effects(e Effect) []Effect {
	if c.auditLog == "" || c.auditLog == "-" {
		return nil
	}
	e.Kind, e.Path = EffectWrite, c.auditLog
	return []Effect{e}
}

func (*permissionConfig) effects(Effect) []Effect { return nil }
func (authConfig) effects(Effect) []Effect        { return nil }
func (*validateConfig) effects(Effect) []Effect   { return nil }
func (*tracingConfig) effects(Effect) []Effect    { return nil }
