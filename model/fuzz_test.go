package model

import (
	"bytes"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// FuzzParse feeds arbitrary documents to Parse. Its seed corpus is under
// testdata/fuzz/FuzzParse. No input may panic; a document Parse accepts
// must stay valid and give consistent derived figures.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fractionalEpochs))
	f.Add([]byte(plausibleBase))
	f.Add([]byte("models:\n  x: {<<, {a: 1}}\n")) // v3.0.1 of the YAML decoder panicked
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse accepted a document that then fails Validate: %v", err)
		}
		if err := p.Clone().Validate(); err != nil {
			t.Fatalf("clone fails Validate: %v", err)
		}
		for name, m := range p.Models {
			var sum units.Bytes
			for _, b := range m.Buckets(25*units.MiB, 4) {
				if b <= 0 {
					t.Fatalf("%s: empty bucket", name)
				}
				sum += b
			}
			if g := m.GradientBytes(FP32); math.Abs(float64(sum-g)) > 1e-9*float64(g) {
				t.Fatalf("%s: buckets sum to %v, gradient %v", name, sum, g)
			}
			if m.ActivationBytes(FP16) <= 0 || m.EffectiveEfficiency() <= 0 {
				t.Fatalf("%s: activations %v, efficiency %v", name, m.ActivationBytes(FP16), m.EffectiveEfficiency())
			}
		}
		for name, r := range p.Recipes {
			if s := r.Steps(int(r.GlobalBatch)); s < 1 {
				t.Fatalf("%s: Steps(%d) = %d", name, r.GlobalBatch, s)
			}
		}
	})
}
