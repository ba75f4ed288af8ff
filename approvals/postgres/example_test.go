package postgres_test

import (
	"context"
	"log"
	"os"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/postgres"
)

// Open connects to a database by DSN; the store's table is made when missing.
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("APPROVALS_DSN")) // postgres://user:password@host:5432/db
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	pending, err := store.List(ctx, approvals.Filter{State: approvals.Pending})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d requests wait for a decision", len(pending))
}

// Importing the package registers its schemes, so that approvals.Open opens
// postgres:// and postgresql:// URLs, from a configuration file, say.
func Example_open() {
	ctx := context.Background()
	store, err := approvals.Open(ctx, "postgresql://app@db.example:5432/approvals?sslmode=verify-full")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
