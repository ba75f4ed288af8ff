package stack

// The approval store backends a stack file can name in [approvals] store are
// those approvals.Open knows: "sqlite:PATH", "postgres://..." and "memory:".
// A backend that registers its URL scheme with approvals.Open when imported is
// imported here, once, for every program that builds stacks.
