package auth

import "testing"

func TestNewAppliesOptions(t *testing.T) {
	calls := 0
	m := New(nil, func(*config) { calls++ }, func(*config) { calls++ })
	if m == nil {
		t.Fatal("New returned nil")
	}
	if calls != 2 {
		t.Errorf("New applied %d options, want 2 (nil options skipped)", calls)
	}
}
