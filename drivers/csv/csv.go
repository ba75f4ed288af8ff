// Package csv is an MCS driver for the CSV files under one root directory.
//
// The model can list the CSV files, describe one (columns, inferred types, row
// count, a sample), read its first rows, filter rows on a column and summarise a
// numeric column. Files separated by commas, semicolons or tabs are recognised
// from their header line; a UTF-8 byte order mark is skipped and a file whose
// first 64 KiB are not valid UTF-8 is read as Latin-1. Ragged rows, quoted fields
// with line breaks and CRLF line ends are read as they are.
//
// Files are streamed: memory stays bounded (a few megabytes) whatever the file
// size, and summarize_numeric_column reads well over 50 MB/s (see
// BenchmarkSummarize). A row larger than 1 MiB, which is what an unclosed quote
// produces, and a header of more than 10,000 columns fail the call instead of
// filling memory. Every result takes at most 1 MiB as JSON, whatever the file
// holds (ten thousand long column names, rows of a megabyte, text that grows
// sixfold when escaped, long paths): read_csv_head and filter_csv_rows stop
// adding rows, describe_csv columns and sample rows, list_csv_files files, and
// a header too large to return whole is cut to its first columns, the rows with
// it; the result is then marked truncated and its notice says what was left
// out. Echoed names and values are cut to 1 KiB, error messages to 64 KiB.
//
// Every path goes through an [os.Root] opened on [Config.Root]; a path that would
// leave it (".." above the root, an absolute path outside it, a symbolic link that
// leads outside, a NUL byte, a backslash, more than 4096 bytes) is refused and the
// call fails. Results report paths relative to the root. A missing file is a
// result the model can read:
//
//	{"path": "sales.csv", "error": "not found", "hint": "call list_csv_files to see the CSV files"}
package csv

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/tools"
)

const version = "0.1.0"

// DefaultMaxRows is the most rows one call returns when Config.MaxRows is zero.
const DefaultMaxRows = 1000

// Config configures a CSV driver. It is plain data.
type Config struct {
	// Root is the directory holding the CSV files; it must exist. Required.
	Root string
	// MaxRows is the most rows one call returns (read_csv_head, filter_csv_rows),
	// whatever limit the model asks for; a limit of 0 means MaxRows. Zero means
	// DefaultMaxRows; a negative value is an error.
	MaxRows int
}

// ToolDriver is the technical half of the CSV driver: it lists and executes the CSV
// tools over one confined root. It is safe for concurrent use. It holds the root
// directory open until Close.
//
// It publishes, in this order, list_csv_files, describe_csv, read_csv_head,
// filter_csv_rows and summarize_numeric_column. Its Meta, ListTools, HasTool,
// ToolDefinition and ToolsVersion are those of the [tools.Table] that holds them:
// the Meta has ID "mcs-go/csv", binding {csv, os, builtin} and capability
// orchestratable; a listing is a copy and never fails; the version does not change
// after NewToolDriver.
type ToolDriver struct {
	*toolTable // the published tools
	root       *confine.Root
	cfg        Config
	limits     limits
}

// toolTable is the driver's name for [tools.Table], so that ToolDriver embeds it
// as an unexported field and takes its listing methods.
type toolTable = tools.Table

// limits bounds list_csv_files; tests lower them.
type limits struct {
	files, visits int
}

var (
	_ mcs.ToolDriver                     = (*ToolDriver)(nil)
	_ mcs.ToolLookup                     = (*ToolDriver)(nil)
	_ mcs.ToolDefiner                    = (*ToolDriver)(nil)
	_ interface{ ToolsVersion() uint64 } = (*ToolDriver)(nil)
)

// NewToolDriver opens cfg.Root and returns the tool driver. It fails when Root is
// not set or is not an existing directory, or when MaxRows is negative.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	if cfg.MaxRows < 0 {
		return nil, fmt.Errorf("csv: MaxRows is %d; set a positive limit, or 0 for the default of %d", cfg.MaxRows, DefaultMaxRows)
	}
	if cfg.MaxRows == 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	root, err := confine.Open(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	d := &ToolDriver{root: root, cfg: cfg, limits: limits{maxFiles, maxVisits}}
	d.toolTable = tools.New(mcs.Meta{
		ID:       "mcs-go/csv",
		Name:     "CSV files",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "csv", Adapter: "os", SpecFormat: "builtin"}},
	})
	for _, def := range toolDefs(cfg.MaxRows) {
		def.add(d.toolTable, d, def, def.opts...)
	}
	return d, nil
}

// ExecuteTool runs the named tool with the model-supplied args and returns a JSON
// object (map[string]any). A missing file, a directory or a file below a file are
// results. The call fails for an unknown tool, invalid arguments, an unknown
// column (the error lists the columns), a file that cannot be parsed, a path
// refused by the confinement (the error wraps a *confine.Error) and file system
// errors; errors begin with the tool name. Reading stops, and the call fails, when
// ctx is done. A result takes at most 1 MiB as JSON and an error message at most
// 64 KiB: what does not fit is left out and the result's notice says so.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := d.toolTable.ExecuteTool(ctx, name, args)
	var argErr *mcs.ArgumentsError
	if err != nil && !errors.Is(err, mcs.ErrUnknownTool) && !errors.As(err, &argErr) {
		return nil, capError(fmt.Errorf("%s: %w", name, err))
	}
	if err != nil {
		return res, capError(err)
	}
	return capResult(name, res), nil
}

// Close releases the root directory. Calls after Close fail.
func (d *ToolDriver) Close() error { return d.root.Close() }

// Driver is the complete CSV driver: the [ToolDriver] with the LLM-facing half of
// [mcs.BaseDriver] (prompts, response processing, middleware). It is safe for
// concurrent use.
type Driver struct {
	*mcs.BaseDriver
	tools *ToolDriver
}

var _ mcs.Driver = (*Driver)(nil)

// New returns a Driver over a new ToolDriver for cfg, configured by opts. It fails
// as NewToolDriver does.
func New(cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), tools: td}, nil
}

// Close releases the root directory. Calls after Close fail.
func (d *Driver) Close() error { return d.tools.Close() }

// outcome is how a tool ends on err, met on path: as [confine.Outcome] says, and
// with a result the model can read for a directory where a file should be.
func outcome(path string, err error) (any, error) {
	const hint = "call list_csv_files to see the CSV files"
	if errors.Is(err, confine.ErrIsDirectory) {
		return map[string]any{"path": path, "error": "is a directory", "hint": hint}, nil
	}
	return confine.Outcome(path, err, hint)
}
