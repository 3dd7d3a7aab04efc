package shell

import "testing"

func BenchmarkParseClassify(b *testing.B) {
	const src = "cd web && npm test -- --watch=false | tee out.log"
	b.ReportAllocs()
	for b.Loop() {
		a, err := parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if fs := Classify(a, testCtx); len(fs) != 0 {
			b.Fatal(fs)
		}
		Writes(a)
		Reads(a)
	}
}

func BenchmarkParseClassifyWrapped(b *testing.B) {
	const src = `sudo -E env FOO=1 bash -lc "find . -name '*.go' -exec rm -rf {} + && git push" | xargs -n1 echo`
	b.ReportAllocs()
	for b.Loop() {
		a, err := parse(src)
		if err != nil {
			b.Fatal(err)
		}
		Classify(a, testCtx)
		Writes(a)
		Reads(a)
	}
}
