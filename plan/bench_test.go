package plan

import "testing"

// BenchmarkPlan times the plans of issue 6: ResNet-50 within 2 hours on
// four systems, and the same on one system.
func BenchmarkPlan(b *testing.B) {
	one := resnetPlan()
	one.Systems = []string{"dgx-a100"}
	for _, c := range []struct {
		name string
		req  Request
	}{{"systems=4", resnetPlan()}, {"systems=1", one}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := Search(c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
