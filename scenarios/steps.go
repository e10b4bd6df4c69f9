package scenarios

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"scaleplan/internal/calib"
	"scaleplan/internal/config"
)

// StepsToTarget is a steps-to-target curve (McCandlish et al. 2018, "An
// empirical model of large-batch training") fitted by `scaleplan fit`:
// reaching the recipe's target at global batch B takes
//
//	S(B) = SMin · (1 + BNoise/B)
//
// optimizer steps. It replaces the recipe's epochs or iterations in a time
// to target.
type StepsToTarget struct {
	// File is a calibration file written by `scaleplan fit --out`, relative
	// to the scenario file, whose steps entry for the scenario's model gives
	// SMin, BNoise and MaxBatch. Default "" (use the fields below).
	File string `yaml:"file"`

	// SMin is the number of steps at infinite batch; > 0 unless File is set.
	SMin float64 `yaml:"s_min"`
	// BNoise is the noise scale, samples; >= 0.
	BNoise float64 `yaml:"b_noise"`
	// MaxBatch is the largest global batch known to reach the target,
	// samples; default 0 (the recipe's max_global_batch).
	MaxBatch int `yaml:"max_batch"`
	// Optimizer picks File's entry by its optimizer label (lars, sgd,
	// lamb, adam): the laws differ by optimizer (docs/mlperf-epochs.md).
	// Default "": the recipe's optimizer, momentum counted as sgd; an
	// entry without the label matches any.
	Optimizer string `yaml:"optimizer"`
	// SMinInterval and BNoiseInterval are the fit's intervals of SMin and
	// BNoise, [low, high]; taken from File's entry. Default none.
	SMinInterval   []float64 `yaml:"s_min_interval"`
	BNoiseInterval []float64 `yaml:"b_noise_interval"`

	Source string `yaml:"source"` // where the curve comes from; default ""
}

// Steps returns ⌈SMin · (1 + BNoise/B)⌉ for global batch b > 0.
func (s *StepsToTarget) Steps(b int) int {
	return int(math.Ceil(s.SMin * (1 + s.BNoise/float64(b))))
}

// StepsRange returns the steps at global batch b > 0 at the low and the
// high ends of the fit's intervals,
//
//	⌈SMin_low · (1 + BNoise_low/b)⌉ and ⌈SMin_high · (1 + BNoise_high/b)⌉,
//
// S(B) growing with both parameters; ok is false without both intervals.
// Taking both ends together spans more than the joint interval, as the two
// parameters' errors are correlated: read it as the spread of runs.
func (s *StepsToTarget) StepsRange(b int) (lo, hi int, ok bool) {
	if len(s.SMinInterval) != 2 || len(s.BNoiseInterval) != 2 {
		return 0, 0, false
	}
	at := func(sMin, bNoise float64) int { return int(math.Ceil(sMin * (1 + bNoise/float64(b)))) }
	return at(max(s.SMinInterval[0], 0), max(s.BNoiseInterval[0], 0)), at(s.SMinInterval[1], s.BNoiseInterval[1]), true
}

// OptimizerFamily is the optimizer label of the steps laws that a
// recipe's optimizer trains by: momentum counts as sgd.
func OptimizerFamily(opt string) string {
	if opt == "momentum" || opt == "sgd_with_momentum" {
		return "sgd"
	}
	return opt
}

// StepsPath returns the path of the steps curve's calibration file
// relative to the working directory, or "" if the scenario has none.
func (r *Resolved) StepsPath() string {
	if r.StepsToTarget == nil || r.StepsToTarget.File == "" {
		return ""
	}
	return r.relative(r.StepsToTarget.File)
}

// relative anchors a file named in the scenario at the scenario's
// directory; shipped scenarios and absolute paths are taken as they are.
func (r *Resolved) relative(f string) string {
	if filepath.IsAbs(f) || strings.HasPrefix(r.File, "scenarios/shipped/") {
		return f
	}
	return filepath.Join(filepath.Dir(r.File), f)
}

// loadSteps reads the steps curve's file, if the scenario names one, and
// checks the curve.
func (r *Resolved) loadSteps(ps *config.Problems) {
	s := r.StepsToTarget
	if s == nil {
		return
	}
	if s.File != "" && r.Mdl != nil {
		cal, err := calib.ReadFile(r.StepsPath())
		if err != nil {
			ps.Addf("steps_to_target.file", "%v", err)
			return
		}
		opt := s.Optimizer
		if opt == "" && r.Rcp != nil {
			opt = OptimizerFamily(string(r.Rcp.Optimizer))
		}
		e, ok := lookupSteps(cal, r.Mdl.Name, opt)
		if !ok {
			var seen []string
			for _, e := range cal.Steps {
				if o := e.Labels["optimizer"]; o != "" {
					seen = append(seen, e.Model+" "+o)
					continue
				}
				seen = append(seen, e.Model)
			}
			ps.Addf("steps_to_target.file", "%s has no steps entry for model %q and optimizer %q (entries: %s)", s.File, r.Mdl.Name, opt, strings.Join(seen, ", "))
			return
		}
		s.SMin, s.BNoise = e.SMin, e.BNoise
		s.SMinInterval, s.BNoiseInterval = e.SMinInterval, e.BNoiseInterval
		if s.MaxBatch == 0 {
			s.MaxBatch = e.MaxBatch
		}
		if s.Source == "" {
			s.Source = s.File
			if e.Source != "" {
				s.Source += " (" + e.Source + ")"
			}
		}
	}
	if s.File == "" && !(s.SMin > 0 && s.SMin < 1e15) {
		ps.Addf("steps_to_target.s_min", "must be a number of steps > 0, got %v", s.SMin)
	}
	if !(s.BNoise >= 0 && s.BNoise < 1e15) {
		ps.Addf("steps_to_target.b_noise", "must be >= 0 samples, got %v", s.BNoise)
	}
	if s.SMin > 0 && s.BNoise >= 0 && s.SMin*(1+s.BNoise) > 1e15 {
		ps.Addf("steps_to_target", "s_min·(1 + b_noise) = %g steps at batch 1 is more than 1e15", s.SMin*(1+s.BNoise))
	}
	for _, iv := range []struct {
		name string
		v    []float64
	}{{"s_min_interval", s.SMinInterval}, {"b_noise_interval", s.BNoiseInterval}} {
		if len(iv.v) != 0 && (len(iv.v) != 2 || !(iv.v[0] <= iv.v[1]) || !(iv.v[1] < 1e15)) {
			ps.Addf("steps_to_target."+iv.name, "must be [low, high] with low <= high < 1e15, got %v", iv.v)
		}
	}
	if s.MaxBatch < 0 {
		ps.Addf("steps_to_target.max_batch", "must be >= 0, got %d", s.MaxBatch)
	}
}

// lookupSteps returns c's steps entry for model whose optimizer label is
// opt, or has none; any optimizer when opt is "".
func lookupSteps(c *calib.Calibration, model, opt string) (calib.StepsEntry, bool) {
	for _, e := range c.Steps {
		if l, has := e.Labels["optimizer"]; e.Model == model && (opt == "" || !has || l == opt) {
			return e, true
		}
	}
	return calib.StepsEntry{}, false
}

// String returns the curve as a formula, such as
// "S(B) = 1200 · (1 + 4096/B)".
func (s *StepsToTarget) String() string {
	return fmt.Sprintf("S(B) = %.6g · (1 + %.6g/B)", s.SMin, s.BNoise)
}
