package auth

import (
	"maps"
	"slices"
)

// MemoryStoreKeys returns the keys s holds, sorted.
func MemoryStoreKeys(s *MemoryStore) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.entries))
}
