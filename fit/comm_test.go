package fit

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"scaleplan/internal/units"
)

// resnet50Gradient is ResNet-50's gradient in fp32: 25,557,032 parameters
// × 4 bytes.
const resnet50Gradient = 25557032 * 4 * units.Byte

// TestCommSeed003: t = 0.054 s on one GPU and 0.15 s on two without
// peer-to-peer (seed 003). Two counts fix the line: t_comm = 0.15 − 0.054
// = 0.096 s (r(2) = 1), and β = 102.2 MB / 0.096 s = 1.065 GB/s.
func TestCommSeed003(t *testing.T) {
	f, err := Comm([]int{1, 2}, []units.Seconds{0.054, 0.15}, nil, resnet50Gradient, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Exact || !scalar.EqualWithinAbs(float64(f.TFixed), 0.054, 1e-12) || !scalar.EqualWithinAbs(float64(f.TComm), 0.096, 1e-12) {
		t.Errorf("exact %v, t_fixed %v, t_comm %v; want true, 0.054, 0.096", f.Exact, float64(f.TFixed), float64(f.TComm))
	}
	if want := 102228128 / 0.096; !scalar.EqualWithinRel(float64(f.Bandwidth), want, 1e-9) {
		t.Errorf("bandwidth %v, want %v B/s", float64(f.Bandwidth), want)
	}
	if !math.IsNaN(float64(f.TCommInterval[0])) {
		t.Errorf("two counts without standard errors: interval %v, want NaN", f.TCommInterval)
	}
	// With standard errors of 2 ms and 5 ms the interval of t_comm is
	// ±1.96·√(2² + 5²) ms.
	f, err = Comm([]int{1, 2}, []units.Seconds{0.054, 0.15}, []units.Seconds{0.002, 0.005}, resnet50Gradient, nil)
	if err != nil {
		t.Fatal(err)
	}
	if half := float64(f.TCommInterval[1]-f.TCommInterval[0]) / 2; !scalar.EqualWithinRel(half, 1.959964*math.Sqrt(29)*1e-3, 1e-6) {
		t.Errorf("half width %v, want %v", half, 1.959964*math.Sqrt(29)*1e-3)
	}
	if lo, hi := float64(f.BandwidthInterval[0]), float64(f.BandwidthInterval[1]); !(lo < float64(f.Bandwidth) && float64(f.Bandwidth) < hi) {
		t.Errorf("bandwidth interval [%v, %v] does not hold %v", lo, hi, float64(f.Bandwidth))
	}
}

// TestCommLine recovers a line through four counts; the ring factors are
// 0, 1, 1.5 and 1.75.
func TestCommLine(t *testing.T) {
	p := []int{1, 2, 4, 8}
	tt := make([]units.Seconds, len(p))
	for i, n := range p {
		tt[i] = units.Seconds(0.02 + 2*float64(n-1)/float64(n)*0.05)
	}
	f, err := Comm(p, tt, nil, 50*units.MB, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Exact || !scalar.EqualWithinAbs(float64(f.TFixed), 0.02, 1e-12) || !scalar.EqualWithinAbs(float64(f.TComm), 0.05, 1e-12) {
		t.Errorf("t_fixed %v, t_comm %v; want 0.02, 0.05", float64(f.TFixed), float64(f.TComm))
	}
	if !scalar.EqualWithinRel(float64(f.Bandwidth), 1e9, 1e-9) {
		t.Errorf("bandwidth %v, want 1 GB/s", f.Bandwidth)
	}
	for _, tc := range []struct {
		p    int
		want float64
	}{{1, 0}, {2, 1}, {4, 1.5}, {8, 1.75}, {128, 1.984375}} {
		if got := Ring(tc.p); got != tc.want {
			t.Errorf("Ring(%d) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestCommErrors(t *testing.T) {
	if _, err := Comm([]int{4, 4}, []units.Seconds{0.1, 0.2}, nil, 0, nil); !errors.Is(err, ErrFewCounts) {
		t.Errorf("one count: %v", err)
	}
	if _, err := Comm([]int{0, 4}, []units.Seconds{0.1, 0.2}, nil, 0, nil); err == nil {
		t.Error("count 0: no error")
	}
	// t that does not grow with p: no bandwidth.
	f, err := Comm([]int{1, 2}, []units.Seconds{0.1, 0.09}, nil, units.MB, nil)
	if err != nil || f.Bandwidth != 0 || !(f.TComm < 0) {
		t.Errorf("falling t: %+v, %v; want t_comm < 0 and no bandwidth", f, err)
	}
}
