package stack

// The approval store backends a stack file can name in [approvals] store: the
// SQLite and PostgreSQL stores register their URL schemes ("sqlite:PATH",
// "postgres://...") with approvals.Open when imported, here, once, for every
// program that builds stacks; "memory:" needs no import.
import (
	_ "github.com/mcs-go/mcs/approvals/postgres"
	_ "github.com/mcs-go/mcs/approvals/sqlite"
)
