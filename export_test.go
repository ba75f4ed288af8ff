package mcs

// DecodeCallFastForTest exposes the fast path of text-call decoding to the fuzzer.
func DecodeCallFastForTest(src string) (call ToolCall, bare, ok bool) {
	return defaultJSONPrompt().decodeCallFast(src)
}

// CallFromObjectForTest exposes the reading of a decoded object to the fuzzer.
func CallFromObjectForTest(m map[string]any) (call ToolCall, bare bool) {
	return defaultJSONPrompt().callFromObject(m)
}

// DecodeTextForTest decodes a whole text as a BaseDriver does; byteByByte turns the
// one-pass decoding of strict objects off. Not safe for concurrent use.
func DecodeTextForTest(text string, byteByByte bool) []ToolCall {
	byteByByteOnly = byteByByte
	defer func() { byteByByteOnly = false }()
	return TextFormat(nil).Extract(Reply{Text: text})
}

// UnmarshalJSONForTest is the kernel's decoding of JSON a model wrote.
func UnmarshalJSONForTest(data []byte, v any) error { return unmarshalJSON(data, v) }
