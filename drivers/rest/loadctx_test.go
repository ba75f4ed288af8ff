package rest

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcs-go/mcs/internal/toolname"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sameNameDoc is a hostile document: n operations all named "same".
func sameNameDoc(n int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"https://api.example"}],"paths":{`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"/p%d":{"get":{"operationId":"same","responses":{"200":{"description":"ok"}}}}`, i)
	}
	sb.WriteString(`}}`)
	return []byte(sb.String())
}

// expiringCtx is a context whose Err reports its deadline as passed from the
// after-th call on, so that a test can end it in the middle of a load without
// timing anything.
type expiringCtx struct {
	context.Context
	after int64
	calls atomic.Int64
}

func (c *expiringCtx) Err() error {
	if c.calls.Add(1) > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *expiringCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Ten thousand operations of one name get distinct names in order, and each
// later listing is the same.
func TestSameNameOperations(t *testing.T) {
	td := mustToolDriver(t, Config{Spec: sameNameDoc(10_000), NoCache: true})
	tools, err := td.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 10_000 {
		t.Fatalf("%d tools, want 10000", len(tools))
	}
	for i, tool := range tools {
		want := "same"
		if i > 0 {
			want = fmt.Sprintf("same_%d", i+1)
		}
		if tool.Name != want {
			t.Fatalf("tool %d is %q, want %q", i, tool.Name, want)
		}
	}
}

// Long names that share a prefix and collide once cut still get the names
// the one-by-one search gives.
func TestUniqueNamesMatchTheSearch(t *testing.T) {
	long := strings.Repeat("x", 62)
	var names []string
	for i := range 300 {
		names = append(names, long+fmt.Sprintf("%02d", i%100), long[:60], long[:61]+"_2", "a", "a_2", "a")
	}
	// The definition: the first free of name, name_2, name_3, ..., each
	// shortened to fit maxNameLen.
	used := map[string]bool{}
	search := func(name string) string {
		final := name
		for i := 2; used[final]; i++ {
			final = toolname.Shorten(fmt.Sprintf("%s_%d", name, i), maxNameLen)
		}
		used[final] = true
		return final
	}
	set := newNameSet()
	for i, n := range names {
		want, got := search(n), uniqueToolName(n, set, maxNameLen)
		if got != want {
			t.Fatalf("name %d (%q): %q, want %q", i, n, got, want)
		}
	}
}

// The build of a spec honours the context: a context that ends in the middle
// of the first listing fails it with the context's error, and the next
// listing loads.
func TestLoadHonoursContext(t *testing.T) {
	for _, doc := range map[string][]byte{
		"json": sameNameDoc(10_000),
		"yaml": []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n" + strings.Repeat("", 0) + yamlPaths(2_000)),
	} {
		td := mustToolDriver(t, Config{Spec: doc, NoCache: true})
		ctx := &expiringCtx{Context: context.Background(), after: 20}
		_, err := td.ListTools(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ListTools with an ending context: %v, want context.DeadlineExceeded", err)
		}
		if _, err := td.ListTools(context.Background()); err != nil {
			t.Fatalf("the next listing: %v", err)
		}
	}
}

func yamlPaths(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "  /p%d: {get: {operationId: same, responses: {'200': {description: ok}}}}\n", i)
	}
	return sb.String()
}
