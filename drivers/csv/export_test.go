package csv

import "io"

// NewGenerator returns a reader of a generated CSV file of about size bytes with
// the columns id, name, amount and date.
func NewGenerator(size int64) io.Reader { return newGen(size) }

// SetLimits lowers the limits of list_csv_files, so that tests need few files.
func SetLimits(td *ToolDriver, files, visits int) { td.limits = limits{files, visits} }
