// Package mcstest is the conformance kit of the kernel's extension points, in the
// style of testing/fstest.TestFS: an author of a tool driver, a wire format, a
// prompt codec or a tool middleware runs one function in a test, and it returns
// one error that lists, by rule name, every rule the implementation broke.
//
//	func TestConformance(t *testing.T) {
//		if err := mcstest.TestToolDriver(myDriver, mcstest.Probe{Tool: "echo", Args: map[string]any{"text": "hi"}}); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// The rules are the contracts the kernel's documentation states in prose: an
// honest Meta and a stable, valid, unique listing that the lookups agree with;
// formats whose streams give the whole output's message and calls however they
// are delivered; decoders that give the same calls over any split of a text and
// never name a pending call before its name is settled; middleware that never
// mutates a call's arguments and passes next's answer through. Each rule has a
// name (the Rule constants); [Error.Broke] tells whether an error lists one.
//
// Every check recovers a panic of the code under test and reports it under
// [RuleNoPanic]. The checks call the implementation from several goroutines too
// ([RuleConcurrent]); run them with -race to let the race detector judge.
package mcstest
