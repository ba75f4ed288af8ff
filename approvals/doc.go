// Package approvals keeps tool calls that wait for a person's decision: durably,
// so that the decision can be made elsewhere (another process, another machine,
// minutes later) and the call then runs exactly once.
//
// A [Request] records one call (the driver's label, the tool, the arguments) and
// its [Fingerprint], which binds the request to that exact call: the label, the
// tool's definition and the canonical arguments. A [Store] keeps requests and
// moves them through their [State]s:
//
//	pending --Decide--> approved --Claim--> used
//	        --Decide--> denied
//	pending or approved past Expires: reads as expired
//
// Three stores implement the same contract, and one conformance test holds them
// to it:
//
//   - [NewMemoryStore]: in memory, for tests and a single process;
//   - sqlite.Open, of package github.com/mcs-go/mcs/approvals/sqlite: an
//     embedded SQLite file (pure Go, no cgo), the default; the file is created
//     0600 and may be shared by several processes on one machine;
//   - postgres.Open, of package github.com/mcs-go/mcs/approvals/postgres: a
//     PostgreSQL database, for many processes and machines.
//
// This package holds no database: the permission middleware and the runner,
// which take a [Store], depend on the standard library and the kernel only. A
// program links in the database stores it uses by importing their packages.
//
// [Open] picks a store by URL: "memory:", always; "sqlite:PATH" and
// "postgres://..." when the program imports the store's package, as it imports a
// database/sql driver, for its side effect if it calls no function of it:
//
//	import _ "github.com/mcs-go/mcs/approvals/sqlite"
//
//	store, err := approvals.Open(ctx, "sqlite:approvals.db")
//
// # Writing a store
//
// A store of another kind (Redis, say) implements [Store] with the kit this
// package exports for store implementations, in the spirit of
// database/sql/driver: [Configure] reads the [Option]s; [Prepare] checks and
// completes a request for Create and gives the [Row] to keep; [Row.Request]
// reads a kept row back, checking it ([ErrCorrupt]) and expiring it;
// [Request.DecideError] says why a request cannot be decided; [Filter.Validate]
// checks a List filter; [Stamp] gives times as stores keep them; and
// [RegisterScheme], called from an init function, lets [Open] open the store's
// URLs.
//
// # Guarantees
//
//   - IDs are 128 random bits from crypto/rand: knowing one request's id tells
//     nothing about another's.
//   - A request is decided at most once: [Store.Decide] moves it from pending to
//     approved or denied, and fails with an error wrapping [ErrNotFound],
//     [ErrDecided] or [ErrExpired] (for errors.Is) otherwise.
//   - An approval is used at most once: [Store.Claim] moves the newest approved,
//     unexpired request with a fingerprint to used in one atomic step; of any
//     number of concurrent claims, from any number of processes sharing the
//     database, exactly one receives it.
//   - Expiry is by each request's Expires time, compared with the store's clock
//     ([WithClock]); nothing needs to run to expire requests.
//   - Arguments are kept as JSON text exactly as encoded, and come back with
//     numbers as json.Number, so that their [Fingerprint] is the same after a
//     round trip through any store.
//   - A row that cannot be read (arguments that are not JSON, an unknown state) is
//     an error wrapping [ErrCorrupt] that names the request's id; it is never
//     claimed.
//   - The run of one chosen request claims that request ([Store.ClaimID]), with
//     the same guarantee, and never another approval of the same call.
//   - Every decision is written to the store's journal ([Journal]) in the same
//     transaction as the decision: a decision and its audit record commit
//     together or not at all. [Deliver] hands the journal to an audit trail at
//     least once.
//   - Every write is one transaction: a failure leaves nothing half-written.
package approvals
