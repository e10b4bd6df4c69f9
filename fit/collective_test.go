package fit

import (
	"errors"
	"math"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/internal/units"
)

// TestFitCollective checks the fit against the law it is fitted to, and
// its refusals.
func TestFitCollective(t *testing.T) {
	law := func(alpha, beta float64, sizes ...units.Bytes) logs.Collective {
		c := logs.Collective{Op: "all_reduce", Ranks: 4}
		for _, s := range sizes {
			c.Points = append(c.Points, logs.CollectivePoint{Bytes: s, Time: units.Seconds(alpha + float64(s)/beta)})
		}
		return c
	}
	f := FitCollective("x", law(20e-6, 50e9, 8, 1<<10, 1<<20, 1<<30))
	if f.Err != nil || math.Abs(float64(f.Latency)-20e-6) > 1e-15 || math.Abs(float64(f.Bandwidth)/50e9-1) > 1e-9 ||
		math.Abs(float64(f.BusBandwidth)/(50e9*1.5)-1) > 1e-9 || math.Abs(f.R2-1) > 1e-12 || f.MaxRelError > 1e-9 {
		t.Errorf("exact law: %+v", f)
	}
	// No latency in the data: α held at 0, not negative.
	c := law(0, 10e9, 1<<20, 1<<24)
	c.Points[0].Time *= 0.9
	if f := FitCollective("x", c); f.Err != nil || f.Latency != 0 || !(f.Bandwidth > 0) {
		t.Errorf("no latency: %+v", f)
	}
	zero := law(1e-5, 1e9, 8, 1024)
	zero.Points[1].Time = 0
	if f := FitCollective("x", zero); f.Err == nil || !strings.Contains(f.Err.Error(), "want a size of 0 or more and a time above 0") {
		t.Errorf("a time of 0: %v", f.Err)
	}
	if f := FitCollective("x", law(1e-5, 1e9, 1024)); !errors.Is(f.Err, ErrFewSizes) {
		t.Errorf("one size: %v", f.Err)
	}
	shrinking := law(0, 1e9, 1<<20, 1<<21)
	shrinking.Points[1].Time = shrinking.Points[0].Time / 2
	if f := FitCollective("x", shrinking); f.Err == nil || !strings.Contains(f.Err.Error(), "does not grow") {
		t.Errorf("shrinking times: %v", f.Err)
	}
	for _, tc := range []struct {
		op   string
		n    int
		want float64
	}{{"all_reduce", 8, 1.75}, {"reduce_scatter", 8, 0.875}, {"all_gather", 4, 0.75}, {"alltoall", 2, 0.5}, {"broadcast", 8, 1}, {"sendrecv", 2, 1}} {
		if k, ok := BusFactor(tc.op, tc.n); !ok || k != tc.want {
			t.Errorf("BusFactor(%s, %d) = %v, %v; want %v", tc.op, tc.n, k, ok, tc.want)
		}
	}
	if _, ok := BusFactor("gather", 8); ok {
		t.Error("BusFactor(gather) known")
	}
}
