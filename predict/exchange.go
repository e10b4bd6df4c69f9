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
	InterNode sim.Algorithm // hierarchical's between nodes
	Bucket    units.Bytes
	// Time is the bucket's all-reduce, Latency the all-reduce of one byte
	// by the same algorithm on the same ranks.
	Time, Latency units.Seconds
	// Faster is the fastest other synchronous algorithm for the bucket on
	// the same ranks (ring, halving-doubling, double-tree, hierarchical
	// with a ring or a double tree between nodes), FasterInterNode its
	// algorithm between nodes when it is hierarchical, and FasterTime its
	// time; Faster is Algorithm when none is faster.
	Faster          sim.Algorithm
	FasterInterNode sim.Algorithm
	FasterTime      units.Seconds
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
	bucket := bucketOf(cfg)
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
	c := &ExchangeCheck{Devices: row.Point.Devices, Algorithm: cfg.Comm.Algorithm, InterNode: cfg.Comm.InterNode, Bucket: bucket, Time: t, Latency: lat,
		Faster: cfg.Comm.Algorithm, FasterInterNode: cfg.Comm.InterNode, FasterTime: t}
	for _, a := range [][2]sim.Algorithm{{sim.Ring, sim.Ring}, {sim.HalvingDoubling, sim.Ring}, {sim.DoubleTree, sim.Ring},
		{sim.Hierarchical, sim.Ring}, {sim.Hierarchical, sim.DoubleTree}} {
		if a[0] == cfg.Comm.Algorithm && (a[0] != sim.Hierarchical || a[1] == cfg.Comm.InterNode) {
			continue
		}
		alt := cfg
		alt.Comm.Algorithm, alt.Comm.InterNode = a[0], a[1]
		if at, err := sim.AllReduceTime(alt, bucket); err == nil && at < c.FasterTime {
			c.Faster, c.FasterInterNode, c.FasterTime = a[0], a[1], at
		}
	}
	return c
}

// bucketOf returns the bytes of one all-reduce of cfg's gradient
// exchange: its bucket size (sim.DefaultBucket when unset), or the whole
// gradient when smaller; 0 without gradients.
func bucketOf(cfg sim.Config) units.Bytes {
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
	return max(min(bucket, grad), 0)
}
