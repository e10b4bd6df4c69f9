package validate

import "testing"

// BenchmarkValidate times the built-in validation cases.
func BenchmarkValidate(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if rep := CompareCases(BuiltinCases(), Options{}); rep.Failed > 0 {
			b.Fatal(rep.Failed, "cases failed")
		}
	}
}
