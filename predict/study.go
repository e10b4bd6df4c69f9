package predict

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/config"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

//go:embed default.yaml
var defaultStudy []byte

// Study is a set of scenarios predicted side by side: variants of one
// experiment (where the data lives, which transport carries gradients)
// over the same cluster sizes. It is the YAML form:
//
//	name: tsubame3-resnet50-caffe2
//	devices: [1, 4, 16, 32, 64, 128, 256, 512]
//	calibration: {v0: 191.39, t: 0, devices: 1}
//	variants:
//	  - label: (a) default
//	    scenario: tsubame3-resnet50-caffe2-default
//	  - label: (c) staged + verbs
//	    scenario: tsubame3-resnet50-caffe2-verbs
type Study struct {
	Name        string `yaml:"name"`        // identifier; required
	Description string `yaml:"description"` // one line; default ""

	// Devices replaces every variant's sweep of device counts; default nil
	// (each scenario's own).
	Devices []int `yaml:"devices"`
	// Calibration replaces every variant's compute calibration unless the
	// variant gives its own; default nil (each scenario's own).
	Calibration *scenarios.Calibration `yaml:"calibration"`

	// Variants are the scenarios, in the order the tables show them; at
	// least one.
	Variants []Variant `yaml:"variants"`

	// File is the file the study was read from; relative scenario paths
	// are anchored at its directory. Default "" (the working directory).
	File string `yaml:"-"`
}

// Variant is one scenario of a study.
type Variant struct {
	Label string `yaml:"label"` // column heading; default the scenario's name
	// Scenario is a shipped scenario's name or the path of a scenario
	// file, relative to the study file. Required.
	Scenario string `yaml:"scenario"`
	// Calibration replaces the scenario's compute calibration; default nil
	// (the study's, else the scenario's).
	Calibration *scenarios.Calibration `yaml:"calibration"`
}

// DefaultStudy returns the study `scaleplan predict` runs with no
// argument: ResNet-50 to 90 epochs with Caffe2 on TSUBAME 3.0 (seed 001),
// as delivered, with the data staged, and staged with verbs between nodes,
// over 1 to 512 GPUs.
func DefaultStudy() *Study {
	s, err := ReadStudy(bytes.NewReader(defaultStudy), "predict/default.yaml")
	if err != nil {
		panic("predict: the embedded default study is invalid: " + err.Error())
	}
	return s
}

// ReadStudy reads a study from r strictly; file names it in errors and
// anchors relative scenario paths.
func ReadStudy(r io.Reader, file string) (*Study, error) {
	var s Study
	root, err := config.Decode(r, &s)
	if err != nil {
		return nil, config.InFile(file, err)
	}
	s.File = file
	var ps config.Problems
	if s.Name == "" {
		ps.Addf("name", "required")
	}
	if len(s.Variants) == 0 {
		ps.Addf("variants", "at least one variant is required")
	}
	for i, n := range s.Devices {
		if n <= 0 || n > sim.MaxRanks {
			ps.Addf(fmt.Sprintf("devices[%d]", i), "device count must be in [1, %d], got %d", sim.MaxRanks, n)
		}
	}
	seen := map[string]int{}
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants[%d]", i)
		if v.Scenario == "" {
			ps.Addf(p+".scenario", "required")
		}
		l := v.label()
		if j, dup := seen[l]; dup {
			ps.Addf(p+".label", "%q is the label of variants[%d] too", l, j)
		}
		seen[l] = i
	}
	if ps.Err() != nil {
		ps.Locate(root)
		return nil, config.InFile(file, &ps)
	}
	return &s, nil
}

func (v Variant) label() string {
	if v.Label != "" {
		return v.Label
	}
	return v.Scenario
}

// Load returns the study ref names: the default study for "", a study
// file (a YAML file with a variants list), or a one-variant study of a
// shipped scenario's name or scenario file.
func Load(ref string) (*Study, error) {
	if ref == "" {
		return DefaultStudy(), nil
	}
	if slices.Contains(scenarios.Names(), ref) {
		return &Study{Name: ref, Variants: []Variant{{Scenario: ref}}}, nil
	}
	data, err := config.ReadFile(ref, "scenario file")
	if err != nil {
		var pe *os.PathError
		if !errors.As(err, &pe) {
			return nil, err // names the file already
		}
		if !strings.ContainsAny(ref, `/\`) && !strings.HasSuffix(ref, ".yaml") && !strings.HasSuffix(ref, ".yml") {
			return nil, errors.New(config.Unknown("scenario", ref, scenarios.Names()))
		}
		return nil, fmt.Errorf("scenario file %s: %w", ref, err)
	}
	if isStudy(data) {
		return ReadStudy(bytes.NewReader(data), ref)
	}
	return &Study{Name: ref, Variants: []Variant{{Scenario: ref}}}, nil
}

// isStudy reports whether data is a YAML mapping with a variants key. It
// reads the document as nodes only, which takes time linear in its size
// (decoding a mapping compares every key with every other), and a panic
// of the YAML decoder counts as not a study: the loader it then goes to
// reports the document's problems.
func isStudy(data []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "variants" {
			return true
		}
	}
	return false
}

// Scenario loads variant i of s, with the study's devices and calibration
// applied before sopt.Edit, so that the caller's edits come last and every
// value meets the scenario's checks.
func (s *Study) Scenario(i int, sopt scenarios.Options) (*scenarios.Resolved, error) {
	v := s.Variants[i]
	ref := v.Scenario
	if s.File != "" && !slices.Contains(scenarios.Names(), ref) && !filepath.IsAbs(ref) && !strings.HasPrefix(s.File, "predict/") {
		ref = filepath.Join(filepath.Dir(s.File), ref)
	}
	user := sopt.Edit
	// The caller's overrides come last, so their sources win.
	study := "the study"
	if s.File != "" {
		study = "study " + s.File
	}
	over := map[string]string{}
	if s.Devices != nil {
		over["sweep.devices"] = study + ": devices"
	}
	if v.Calibration != nil || s.Calibration != nil {
		over["calibration"] = study + ": calibration"
	}
	maps.Copy(over, sopt.Overrides)
	sopt.Overrides = over
	sopt.Edit = func(sc *scenarios.Scenario) {
		if s.Devices != nil {
			sc.Sweep.Devices = slices.Clone(s.Devices)
		}
		cal := v.Calibration
		if cal == nil {
			cal = s.Calibration
		}
		if cal != nil {
			c := *cal
			sc.Calibration = &c
		}
		if user != nil {
			user(sc)
		}
	}
	r, err := scenarios.Load(ref, sopt)
	if err != nil {
		// Only a file that failed as a scenario is read again, to say
		// why when it is a study.
		if data, rerr := config.ReadFile(ref, "scenario file"); rerr == nil && isStudy(data) {
			return nil, fmt.Errorf("%s: variants[%d].scenario: %s is a study (it has variants), not a scenario", study, i, v.Scenario)
		}
	}
	return r, err
}

// Run predicts every variant of s, in order; each Prediction's Label is
// the variant's.
func (s *Study) Run(sopt scenarios.Options, opt Options) ([]*Prediction, error) {
	out := make([]*Prediction, len(s.Variants))
	for i, v := range s.Variants {
		r, err := s.Scenario(i, sopt)
		if err != nil {
			return nil, err
		}
		p, err := Predict(r, opt)
		if err != nil {
			return nil, err
		}
		if v.Label != "" {
			p.Label = v.Label
		}
		out[i] = p
	}
	return out, nil
}
