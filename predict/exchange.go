package predict

import (
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// LatencyShare is the share of a bucket's all-reduce above which
// CheckExchange calls the exchange latency-bound.
const LatencyShare = 0.5

// ExposedShare is the share of the step the exposed communication must
// take before CheckExchange looks at it.
const ExposedShare = 0.1

// ExchangeCheck says how much of one gradient bucket's all-reduce is
// latency at a configuration, each all-reduce alone on the network
// (sim.AllReduceTime): Time of the bucket, Latency of one byte.
type ExchangeCheck struct {
	Devices   int
	Algorithm sim.Algorithm
	Bucket    units.Bytes
	// Time is the bucket's all-reduce, Latency the all-reduce of one byte
	// by the same algorithm on the same ranks.
	Time, Latency units.Seconds
	// Faster is the fastest other synchronous algorithm for the bucket on
	// the same ranks (ring, halving-doubling, double-tree, hierarchical),
	// and FasterTime its time; Faster is Algorithm when none is faster.
	Faster     sim.Algorithm
	FasterTime units.Seconds
}

// CheckExchange looks at the row of p on the most devices that ran, is
// purely data-parallel (one pipeline stage) and exposes at least
// ExposedShare of its step in communication, and returns its ExchangeCheck
// when at least LatencyShare of a bucket's all-reduce is latency: an
// exchange whose cost is its number of steps, not its bytes. It returns nil
// when no row qualifies or the exchange is bandwidth-bound. The bucket is
// the configuration's bucket size, or the whole gradient when smaller.
func (p *Prediction) CheckExchange() *ExchangeCheck {
	var row *Row
	for i := range p.Rows {
		r := &p.Rows[i]
		if !r.OK() || r.Point.Devices < 2 || (row != nil && r.Point.Devices <= row.Point.Devices) {
			continue
		}
		if res := r.Result; float64(res.Breakdown.Comm) >= ExposedShare*float64(res.StepTime) {
			row = r
		}
	}
	if row == nil {
		return nil
	}
	cfg, err := p.Scenario.Build(row.Point)
	if err != nil || cfg.Stages > 1 {
		return nil
	}
	switch cfg.Comm.Algorithm {
	case sim.Ring, sim.HalvingDoubling, sim.Tree, sim.DoubleTree, sim.Hierarchical, sim.Torus2D:
	default:
		return nil
	}
	grad := cfg.Memory.Gradients
	if len(cfg.Comm.Layers) > 0 {
		grad = 0
		for _, b := range cfg.Comm.Layers {
			grad += b
		}
	}
	bucket := cfg.Comm.Bucket
	if bucket <= 0 {
		bucket = sim.DefaultBucket
	}
	bucket = min(bucket, grad)
	if bucket <= 0 {
		return nil
	}
	t, err := sim.AllReduceTime(cfg, bucket)
	if err != nil || t <= 0 {
		return nil
	}
	lat, err := sim.AllReduceTime(cfg, 1)
	if err != nil || float64(lat) < LatencyShare*float64(t) {
		return nil
	}
	c := &ExchangeCheck{Devices: row.Point.Devices, Algorithm: cfg.Comm.Algorithm, Bucket: bucket, Time: t, Latency: lat, Faster: cfg.Comm.Algorithm, FasterTime: t}
	for _, a := range []sim.Algorithm{sim.Ring, sim.HalvingDoubling, sim.DoubleTree, sim.Hierarchical} {
		if a == cfg.Comm.Algorithm {
			continue
		}
		alt := cfg
		alt.Comm.Algorithm = a
		if at, err := sim.AllReduceTime(alt, bucket); err == nil && at < c.FasterTime {
			c.Faster, c.FasterTime = a, at
		}
	}
	return c
}
