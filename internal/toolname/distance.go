package toolname

// Distance is the Levenshtein distance between a and b, in bytes, for "did you
// mean" suggestions of tool names and keys; strings longer than 256 bytes are
// compared on their first 256, so that a hostile name cannot make it expensive.
func Distance(a, b string) int {
	const limit = 256
	a, b = a[:min(len(a), limit)], b[:min(len(b), limit)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
