package model

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"sync"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/config"
)

//go:embed profiles/*.yaml
var embedded embed.FS

// Profiles holds datasets, models and recipes by name. Parse, ReadFile,
// Load and Default fill in defaults, validate, and resolve each recipe's
// dataset; a Profiles built in Go should be checked with Validate.
type Profiles struct {
	Datasets map[string]*Dataset // by name; each Dataset.Name is its key
	Models   map[string]*Model   // by name; each Model.Name is its key
	Recipes  map[string]*Recipe  // by name; each Recipe.Name is its key

	// origins maps "models.NAME" (and datasets., recipes.) to the document
	// the entry came from, so that problems can be given a file and line.
	origins map[string]origin
}

type origin struct {
	file string
	root *yaml.Node
}

// Document is the YAML form of a profile file: datasets, models and
// recipes keyed by name. Other documents embed it, such as the profiles
// section of a scenario file (see Inline).
type Document struct {
	Datasets map[string]*Dataset `yaml:"datasets"` // default none
	Models   map[string]*Model   `yaml:"models"`   // default none
	Recipes  map[string]*Recipe  `yaml:"recipes"`  // default none
}

// Inline is a profile document decoded as part of another document, such
// as the profiles section of a scenario file.
type Inline struct {
	Document *Document  // the decoded entries; LoadWith takes them over
	File     string     // the enclosing document's file name, for errors
	Root     *yaml.Node // the node the entries were decoded from, for lines
}

// UnknownError reports a name that is not among the profiles.
type UnknownError struct {
	Kind  string   // "model", "recipe" or "dataset"
	Name  string   // the name asked for
	Valid []string // the names there are
}

func (e *UnknownError) Error() string { return config.Unknown(e.Kind, e.Name, e.Valid) }

// Model returns the model called name.
func (p *Profiles) Model(name string) (*Model, error) {
	if m, ok := p.Models[name]; ok && m != nil {
		return m, nil
	}
	return nil, &UnknownError{Kind: "model", Name: name, Valid: p.ModelNames()}
}

// Recipe returns the recipe called name.
func (p *Profiles) Recipe(name string) (*Recipe, error) {
	if r, ok := p.Recipes[name]; ok && r != nil {
		return r, nil
	}
	return nil, &UnknownError{Kind: "recipe", Name: name, Valid: p.RecipeNames()}
}

// Dataset returns the dataset called name.
func (p *Profiles) Dataset(name string) (*Dataset, error) {
	if d, ok := p.Datasets[name]; ok && d != nil {
		return d, nil
	}
	return nil, &UnknownError{Kind: "dataset", Name: name, Valid: p.DatasetNames()}
}

// SampleUnit returns what one sample of the named model's dataset is, the
// unit of its per-sample figures ("" is Image, the default).
func (p *Profiles) SampleUnit(name string) (SampleUnit, error) {
	m, err := p.Model(name)
	if err != nil {
		return "", err
	}
	d, err := p.Dataset(m.Dataset)
	if err != nil {
		return "", err
	}
	return d.SampleUnit, nil
}

// ModelNames returns the model names, sorted.
func (p *Profiles) ModelNames() []string { return sortedKeys(p.Models) }

// RecipeNames returns the recipe names, sorted.
func (p *Profiles) RecipeNames() []string { return sortedKeys(p.Recipes) }

// DatasetNames returns the dataset names, sorted.
func (p *Profiles) DatasetNames() []string { return sortedKeys(p.Datasets) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var defaultProfiles = sync.OnceValues(func() (*Profiles, error) {
	names, err := fs.Glob(embedded, "profiles/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	p := newProfiles()
	var errs []error
	for _, name := range names {
		data, err := embedded.ReadFile(name)
		if err != nil {
			return nil, err
		}
		q, err := decode(bytes.NewReader(data), name)
		if err != nil {
			errs = append(errs, config.InFile(name, err))
			continue
		}
		if err := p.merge(q, false); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
})

// Default returns the shipped profiles, embedded in the binary. Each call
// returns a fresh copy that the caller may change; Default is safe for
// concurrent use.
func Default() (*Profiles, error) {
	p, err := defaultProfiles()
	if err != nil {
		return nil, fmt.Errorf("model: embedded profiles: %w", err)
	}
	return p.Clone(), nil
}

// Parse reads one profile document from r, strictly (unknown fields are
// errors), fills in defaults and validates it on its own: its recipes may
// name only models and datasets it defines. Problems name their YAML path
// and line.
func Parse(r io.Reader) (*Profiles, error) {
	p, err := decode(r, "")
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadFile is Parse of the named file, with the file name in its errors.
// The file is read through config.MaxFileSize.
func ReadFile(name string) (*Profiles, error) {
	data, err := config.ReadFile(name, fileKind)
	if err != nil {
		return nil, err
	}
	p, err := decode(bytes.NewReader(data), name)
	if err != nil {
		return nil, config.InFile(name, err)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// Load returns the default profiles with the user's profile files merged
// in. Each path is a YAML file or a directory whose *.yaml and *.yml files
// are read in name order. An entry adds a dataset, model or recipe, or
// replaces the one of the same name entirely; later files win. The merged
// set is validated as a whole, so a user recipe may name a shipped model.
func Load(paths ...string) (*Profiles, error) {
	return LoadWith(paths, nil)
}

// LoadWith is Load followed by the inline documents, merged in order after
// the files. Problems in an inline document name its File and the lines
// under its Root.
func LoadWith(paths []string, inline []Inline) (*Profiles, error) {
	p, err := Default()
	if err != nil {
		return nil, err
	}
	files, err := config.YAMLFiles("profiles", paths)
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		data, err := config.ReadFile(name, fileKind)
		if err != nil {
			return nil, err
		}
		q, err := decode(bytes.NewReader(data), name)
		if err != nil {
			return nil, config.InFile(name, err)
		}
		if err := p.merge(q, true); err != nil {
			return nil, err
		}
	}
	for _, in := range inline {
		if in.Document == nil {
			continue
		}
		q, err := fromDocument(in.Document, origin{file: in.File, root: in.Root})
		if err != nil {
			return nil, err
		}
		if err := p.merge(q, true); err != nil {
			return nil, err
		}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// fileKind names a profiles file in the error for one past
// config.MaxFileSize.
const fileKind = "profiles file"

func newProfiles() *Profiles {
	return &Profiles{
		Datasets: map[string]*Dataset{},
		Models:   map[string]*Model{},
		Recipes:  map[string]*Recipe{},
		origins:  map[string]origin{},
	}
}

// decode reads one document without validating it.
func decode(r io.Reader, file string) (*Profiles, error) {
	var doc Document
	root, err := config.Decode(r, &doc)
	if err != nil {
		return nil, err
	}
	return fromDocument(&doc, origin{file: file, root: root})
}

// fromDocument names the entries of doc after their keys.
func fromDocument(doc *Document, o origin) (*Profiles, error) {
	p := newProfiles()
	var issues []issue
	issues = adopt(p, o, "datasets", doc.Datasets, p.Datasets, func(d *Dataset) *string { return &d.Name }, issues)
	issues = adopt(p, o, "models", doc.Models, p.Models, func(m *Model) *string { return &m.Name }, issues)
	issues = adopt(p, o, "recipes", doc.Recipes, p.Recipes, func(r *Recipe) *string { return &r.Name }, issues)
	if err := p.report(issues); err != nil {
		return nil, err
	}
	return p, nil
}

// adopt puts each entry of a document's section kind (in) into out, sets
// the name it carries (name returns where) to its key and records that it
// came from o; an empty entry is one more issue.
func adopt[T any](p *Profiles, o origin, kind string, in, out map[string]*T, name func(*T) *string, issues []issue) []issue {
	for key, v := range in {
		p.origins[kind+"."+key] = o
		if v == nil {
			issues = append(issues, issue{kind, key, "", "empty entry"})
			continue
		}
		*name(v) = key
		out[key] = v
	}
	return issues
}

// merge adds q's entries to p. With override false a name defined twice
// is an error.
func (p *Profiles) merge(q *Profiles, override bool) error {
	var issues []issue
	add := func(section, name string, put func()) {
		key := section + "." + name
		if _, ok := p.origins[key]; ok && !override {
			issues = append(issues, issue{section, name, "", "defined again (first in " + p.origins[key].file + ")"})
			return
		}
		put()
		p.origins[key] = q.origins[key]
	}
	for _, name := range sortedKeys(q.Datasets) {
		add("datasets", name, func() { p.Datasets[name] = q.Datasets[name] })
	}
	for _, name := range sortedKeys(q.Models) {
		add("models", name, func() { p.Models[name] = q.Models[name] })
	}
	for _, name := range sortedKeys(q.Recipes) {
		add("recipes", name, func() { p.Recipes[name] = q.Recipes[name] })
	}
	return q.report(issues)
}

// finish fills in defaults, validates and resolves references.
func (p *Profiles) finish() error {
	p.fillDefaults()
	if err := p.Validate(); err != nil {
		return err
	}
	p.link()
	return nil
}

// fillDefaults sets every field left zero that has a documented default.
func (p *Profiles) fillDefaults() {
	for _, d := range p.Datasets {
		if d == nil {
			continue
		}
		if d.SampleUnit == "" {
			d.SampleUnit = Image
		}
	}
	for _, m := range p.Models {
		if m == nil {
			continue
		}
		if m.Efficiency == 0 {
			m.Efficiency = m.Class.DefaultEfficiency()
		}
		if m.Activations.FP16 == 0 {
			m.Activations.FP16 = m.Activations.FP32 / 2
		}
	}
	for _, r := range p.Recipes {
		if r == nil {
			continue
		}
		if r.Dataset == "" {
			if m := p.Models[r.Model]; m != nil && p.Datasets[m.Dataset] != nil {
				r.Dataset = m.Dataset
			}
		}
		if r.PipelineStages == 0 {
			r.PipelineStages = 1
		}
		if r.GradientAccumulation == 0 {
			r.GradientAccumulation = 1
		}
		if r.GlobalBatch == 0 && r.PipelineStages > 0 && r.Devices%r.PipelineStages == 0 {
			g := float64(r.PerDeviceBatch) * float64(r.Devices/r.PipelineStages) * float64(r.GradientAccumulation)
			if g > 0 && g <= maxBatch {
				r.GlobalBatch = int64(g)
			}
		}
		if r.BatchUnit == "" {
			if d := p.Datasets[r.Dataset]; d != nil {
				r.BatchUnit = d.SampleUnit
			}
		}
		if r.Precision == "" {
			r.Precision = FP32
		}
		if r.MasterWeights == "" {
			r.MasterWeights = FP32
		}
		if r.Warmup.Method == "" && (r.Warmup.Epochs > 0 || r.Warmup.Steps > 0) {
			r.Warmup.Method = "linear"
		}
		for i := range r.TimeToTrain {
			if r.TimeToTrain[i].GlobalBatch == 0 {
				r.TimeToTrain[i].GlobalBatch = r.GlobalBatch
			}
		}
	}
}

// link resolves each recipe's dataset size for Steps.
func (p *Profiles) link() {
	for _, r := range p.Recipes {
		if d := p.Datasets[r.Dataset]; r != nil && d != nil {
			r.trainSamples = d.TrainSamples
		}
	}
}

// Clone returns a deep copy of p.
func (p *Profiles) Clone() *Profiles {
	q := newProfiles()
	for k, d := range p.Datasets {
		if d == nil {
			q.Datasets[k] = nil
			continue
		}
		c := *d
		c.InputShape = append([]int(nil), d.InputShape...)
		q.Datasets[k] = &c
	}
	for k, m := range p.Models {
		if m == nil {
			q.Models[k] = nil
			continue
		}
		c := *m
		c.Layers = append([]Layer(nil), m.Layers...)
		q.Models[k] = &c
	}
	for k, r := range p.Recipes {
		if r == nil {
			q.Recipes[k] = nil
			continue
		}
		c := *r
		c.Schedule.MilestoneEpochs = append([]float64(nil), r.Schedule.MilestoneEpochs...)
		c.Schedule.MilestoneSteps = append([]int64(nil), r.Schedule.MilestoneSteps...)
		if r.Adam != nil {
			a := *r.Adam
			c.Adam = &a
		}
		c.Targets = append([]Target(nil), r.Targets...)
		if r.Shortfall != nil {
			s := *r.Shortfall
			c.Shortfall = &s
		}
		c.TimeToTrain = append([]Measurement(nil), r.TimeToTrain...)
		c.Unknown = append([]string(nil), r.Unknown...)
		q.Recipes[k] = &c
	}
	for k, o := range p.origins {
		q.origins[k] = o
	}
	return q
}
