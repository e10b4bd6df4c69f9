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

	Source string `yaml:"source"` // where the curve comes from; default ""
}

// Steps returns ⌈SMin · (1 + BNoise/B)⌉ for global batch b > 0.
func (s *StepsToTarget) Steps(b int) int {
	return int(math.Ceil(s.SMin * (1 + s.BNoise/float64(b))))
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
		e, ok := cal.LookupSteps(r.Mdl.Name)
		if !ok {
			var seen []string
			for _, e := range cal.Steps {
				seen = append(seen, e.Model)
			}
			ps.Addf("steps_to_target.file", "%s has no steps entry for model %q (entries: %s)", s.File, r.Mdl.Name, strings.Join(seen, ", "))
			return
		}
		s.SMin, s.BNoise = e.SMin, e.BNoise
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
	if s.MaxBatch < 0 {
		ps.Addf("steps_to_target.max_batch", "must be >= 0, got %d", s.MaxBatch)
	}
}

// String returns the curve as a formula, such as
// "S(B) = 1200 · (1 + 4096/B)".
func (s *StepsToTarget) String() string {
	return fmt.Sprintf("S(B) = %.6g · (1 + %.6g/B)", s.SMin, s.BNoise)
}
