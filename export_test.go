package mcs

// DecodeCallFastForTest exposes the fast path of text-call decoding to the fuzzer.
func DecodeCallFastForTest(src string) (ToolCall, bool) {
	return defaultJSONPrompt().decodeCallFast(src)
}

// CallFromObjectForTest exposes the reading of a decoded object to the fuzzer.
func CallFromObjectForTest(m map[string]any) ToolCall {
	return defaultJSONPrompt().callFromObject(m)
}
