package fit

import (
	"errors"
	"math"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/internal/units"
)

// ring is the closed form of a ring all-reduce over p ranks on links of
// bandwidth bw and latency lat: 2(p−1)/p · S/bw + 2(p−1)·lat.
func ring(p int) FabricModel {
	return func(bw units.BytesPerSec, lat units.Seconds, s units.Bytes) (units.Seconds, error) {
		k := float64(p - 1)
		return units.Seconds(2*k/float64(p)*float64(s)/float64(bw) + 2*k*float64(lat)), nil
	}
}

// sweep is a collective test of p ranks from 8 B to 8 GiB by factors of
// four, timed by m at bw and lat.
func sweep(t *testing.T, p int, m FabricModel, bw units.BytesPerSec, lat units.Seconds) logs.Collective {
	c := logs.Collective{Op: "all_reduce", Ranks: p}
	for s := units.Bytes(8); s <= 8<<30; s *= 4 {
		tm, err := m(bw, lat, s)
		if err != nil {
			t.Fatal(err)
		}
		c.Points = append(c.Points, logs.CollectivePoint{Bytes: s, Time: tm})
	}
	return c
}

// TestFitFabricClosedForm fits the ring's closed form to times it gave at
// 46 GB/s and 7 us, from a start ten times off in both, and checks the
// figures come back to 1e-6 with intervals around them, over one test
// and over two of different rank counts.
func TestFitFabricClosedForm(t *testing.T) {
	const bw, lat = 46e9, 7e-6
	for _, ranks := range [][]int{{8}, {4, 16}} {
		var tests []FabricTest
		for _, p := range ranks {
			tests = append(tests, FabricTest{Source: "synthetic", Collective: sweep(t, p, ring(p), bw, lat), Model: ring(p)})
		}
		f, err := FitFabric(tests, bw*10, lat/10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(f.Bandwidth)/bw-1) > 1e-6 || math.Abs(float64(f.Latency)/lat-1) > 1e-6 {
			t.Errorf("ranks %v: fitted %v, %v; want 46 GB/s, 7 us", ranks, f.Bandwidth, f.Latency)
		}
		if f.Error > 1e-6 || len(f.Tests) != len(ranks) || f.Sizes != 16*len(ranks) {
			t.Errorf("ranks %v: error %g, %d tests, %d sizes", ranks, f.Error, len(f.Tests), f.Sizes)
		}
		if !(f.BandwidthInterval[0] <= f.Bandwidth && f.Bandwidth <= f.BandwidthInterval[1]) {
			t.Errorf("ranks %v: bandwidth %v outside its interval %v", ranks, f.Bandwidth, f.BandwidthInterval)
		}
		e := f.Entry("s", "inter", "verbs", "ring")
		if e.Ranks[0] != ranks[0] || e.Ranks[1] != ranks[len(ranks)-1] || e.Source != "synthetic" || e.Tests != len(ranks) {
			t.Errorf("ranks %v: entry %+v", ranks, e)
		}
	}
}

// TestFitFabricErrors: too few points, a time that is not above 0, a
// model that fails, and a parameter the times do not depend on.
func TestFitFabricErrors(t *testing.T) {
	one := logs.Collective{Op: "all_reduce", Ranks: 8, Points: []logs.CollectivePoint{{Bytes: 8, Time: 1e-5}}}
	if _, err := FitFabric([]FabricTest{{Source: "one", Collective: one, Model: ring(8)}}, 1e9, 1e-6, nil); !errors.Is(err, ErrFewSizes) {
		t.Errorf("one point: %v, want ErrFewSizes", err)
	}
	zero := sweep(t, 8, ring(8), 46e9, 7e-6)
	zero.Points[3].Time = 0
	if _, err := FitFabric([]FabricTest{{Source: "zero", Collective: zero, Model: ring(8)}}, 1e9, 1e-6, nil); err == nil {
		t.Error("a time of 0: no error")
	}
	fail := func(units.BytesPerSec, units.Seconds, units.Bytes) (units.Seconds, error) { return 0, errors.New("no") }
	good := sweep(t, 8, ring(8), 46e9, 7e-6)
	if _, err := FitFabric([]FabricTest{{Source: "fail", Collective: good, Model: fail}}, 1e9, 1e-6, nil); !errors.Is(err, ErrFabricModel) {
		t.Errorf("failing model: %v, want ErrFabricModel", err)
	}
	// Another link bounds every size: the bandwidth does not matter, the
	// latency is fitted; then neither matters.
	flat := func(_ units.BytesPerSec, lat units.Seconds, s units.Bytes) (units.Seconds, error) {
		return lat*14 + units.Seconds(float64(s)/200e9), nil
	}
	f, err := FitFabric([]FabricTest{{Source: "flat", Collective: sweep(t, 8, flat, 46e9, 7e-6), Model: flat}}, 1e9, 1e-6, nil)
	if err != nil || len(f.Undetermined) != 1 || f.Undetermined[0] != "bandwidth" || math.Abs(float64(f.Latency)/7e-6-1) > 1e-6 ||
		!math.IsNaN(float64(f.BandwidthInterval[0])) || math.IsNaN(float64(f.LatencyInterval[0])) {
		t.Errorf("bandwidth that does not matter: %+v, %v; want latency 7 us fitted with an interval, bandwidth undetermined", f, err)
	}
	fixed := func(units.BytesPerSec, units.Seconds, units.Bytes) (units.Seconds, error) { return 1e-4, nil }
	if _, err := FitFabric([]FabricTest{{Source: "fixed", Collective: good, Model: fixed}}, 1e9, 1e-6, nil); !errors.Is(err, ErrUndetermined) {
		t.Errorf("neither matters: %v, want ErrUndetermined", err)
	}
}
