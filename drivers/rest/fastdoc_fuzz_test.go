package rest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzFastDoc is the differential fuzzer of the fast path: for every document
// fastdoc.Decode takes, the driver lists what kin-openapi's own decoding gives
// (the same tools and requests, the same parts of the decoded model), and fails
// with the same error. Documents the fast path gives way on prove nothing and
// are skipped by the comparison.
func FuzzFastDoc(f *testing.F) {
	for _, data := range fastEdgeDocs {
		f.Add([]byte(data))
	}
	f.Add([]byte(`{"openapi":"3.0.0","servers":[{"url":"https://api.example"}],"paths":{"/a/{id}":{"get":{"operationId":"getA","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer","maximum":5}}]}}}}`))
	f.Add([]byte(`{"openapi":"3.0.3","paths":{"/p":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S"}}}}}}},"components":{"schemas":{"S":{"type":"object","properties":{"a":{"type":"string"}}}}}}`))
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","operationId":"b"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || data[0] != '{' {
			return
		}
		b := mustBase(t, Config{BaseURL: "https://operator.example/v1"})
		slow, slowErr := loadWith(t, data, b, parseOrdinary)
		fast, fastErr := loadWith(t, data, b, parse)
		if (slowErr != nil) != (fastErr != nil) {
			t.Fatalf("ordinary error %v, fast error %v", slowErr, fastErr)
		}
		if slowErr != nil {
			if slowErr.Error() != fastErr.Error() {
				t.Fatalf("errors differ:\nordinary %v\nfast     %v", slowErr, fastErr)
			}
			return
		}
		if diff := cmp.Diff(specSummary(slow), specSummary(fast)); diff != "" {
			t.Fatalf("the listing differs (-ordinary +fast):\n%s", diff)
		}
		slowDoc, _, err1 := parseOrdinary(context.Background(), data, "")
		fastDoc, _, err2 := parse(context.Background(), data, "")
		if err1 != nil || err2 != nil {
			return
		}
		if diff := cmp.Diff(modelSummary(slowDoc), modelSummary(fastDoc)); diff != "" {
			t.Fatalf("the decoded model differs (-ordinary +fast):\n%s", diff)
		}
	})
}
