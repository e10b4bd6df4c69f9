package model

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// TestShippedFiles decodes every embedded file on its own, strictly, and
// checks the merged set validates.
func TestShippedFiles(t *testing.T) {
	names, err := fs.Glob(embedded, "profiles/*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("embedded profiles: %v %v", names, err)
	}
	for _, name := range names {
		data, err := embedded.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc Document
		if _, err := config.Decode(bytes.NewReader(data), &doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// The same bytes under model/profiles on disk.
		disk, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(disk, data) {
			t.Errorf("%s: embedded copy differs from the file (%v)", name, err)
		}
	}
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	for _, want := range []struct {
		kind  string
		names []string
	}{
		{"model", []string{"resnet50", "ssd-resnet34", "maskrcnn-r50-fpn", "transformer-big", "transformer-base", "gnmt", "efficientnet-b4", "efficientnet-b4-g16", "mlp", "cnn"}},
		{"recipe", []string{"mlperf-v0.6-resnet50", "mlperf-v0.7-resnet50", "mlperf-v0.7-ssd", "mlperf-v0.7-maskrcnn", "mlperf-v0.7-transformer", "mlperf-v0.7-gnmt", "tsubame3-resnet50", "graphcore-efficientnet-b4", "engine-mlp", "engine-cnn"}},
	} {
		for _, n := range want.names {
			var err error
			if want.kind == "model" {
				_, err = p.Model(n)
			} else {
				_, err = p.Recipe(n)
			}
			if err != nil {
				t.Errorf("shipped %s %q: %v", want.kind, n, err)
			}
		}
	}
}

// TestLayoutSums adds every shipped gradient layout up independently of
// Validate.
func TestLayoutSums(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range p.ModelNames() {
		m := p.Models[name]
		if len(m.Layers) == 0 {
			t.Errorf("%s has no gradient layout", name)
		}
		var sum int64
		for _, l := range m.Layers {
			sum += l.Params
		}
		if sum != m.Params {
			t.Errorf("%s: layers sum to %d, params %d", name, sum, m.Params)
		}
	}
}

func TestDefaultCopies(t *testing.T) {
	a, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	a.Models["resnet50"].Params = 1
	a.Models["resnet50"].Layers[0].Params = 1
	a.Recipes["mlperf-v0.7-ssd"].Targets[0].Value = 0.1
	delete(a.Datasets, "mnist")
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if b.Models["resnet50"].Params != 25557032 || b.Models["resnet50"].Layers[0].Params != 1000 ||
		b.Recipes["mlperf-v0.7-ssd"].Targets[0].Value != 0.23 || b.Datasets["mnist"] == nil {
		t.Error("changing one Default() result changed the next")
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := Default()
			if err != nil {
				t.Error(err)
				return
			}
			p.Models["mlp"].Params++
			if r, err := p.Recipe("engine-mlp"); err != nil || r.Steps(64) != 9380 {
				t.Errorf("concurrent Default: %v", err)
			}
		}()
	}
	wg.Wait()
}

func TestLookup(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		lookup func(string) error
		name   string
		want   string
	}{
		{func(n string) error { _, err := p.Model(n); return err }, "resnet5", `unknown model "resnet5"; did you mean "resnet50"?`},
		{func(n string) error { _, err := p.Recipe(n); return err }, "mlperf-v0.7-resnet", `unknown recipe "mlperf-v0.7-resnet"; did you mean "mlperf-v0.7-resnet50" or "mlperf-v0.6-resnet50" or "mlperf-v0.7-gnmt"?`},
		{func(n string) error { _, err := p.Dataset(n); return err }, "imagenet", `unknown dataset "imagenet"; did you mean "imagenet-1k" or "imagenet-1k-380"?`},
	}
	for _, c := range cases {
		err := c.lookup(c.name)
		var ue *UnknownError
		if err == nil || err.Error() != c.want || !errors.As(err, &ue) || ue.Name != c.name {
			t.Errorf("lookup %q = %v, want %s", c.name, err, c.want)
		}
	}
	for _, names := range [][]string{p.ModelNames(), p.RecipeNames(), p.DatasetNames()} {
		if !sort.StringsAreSorted(names) || len(names) == 0 {
			t.Errorf("names not sorted: %v", names)
		}
	}
}

// TestCustomExample reads docs/models-own.md's example on its own.
func TestCustomExample(t *testing.T) {
	p, err := ReadFile("testdata/custom.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Model("mlp-cifar")
	if err != nil {
		t.Fatal(err)
	}
	if m.ActivationBytes(FP16) != 10280 || m.Efficiency != MLP.DefaultEfficiency() {
		t.Errorf("defaults not filled: fp16 activations %v, efficiency %v", m.ActivationBytes(FP16), m.Efficiency)
	}
	r, err := p.Recipe("mlp-cifar-sgd")
	if err != nil {
		t.Fatal(err)
	}
	// 128 × 4 = 512; ⌈50000/512⌉ = 98 steps per epoch; 30 epochs.
	if r.GlobalBatch != 512 || r.Dataset != "cifar10" || r.BatchUnit != Image || r.Steps(512) != 30*98 {
		t.Errorf("recipe: global %d on %s in %s, %d steps; want 512 on cifar10 in images, 2940", r.GlobalBatch, r.Dataset, r.BatchUnit, r.Steps(512))
	}
	// docs/models-own.md shows the same file.
	doc, err := os.ReadFile("../docs/models-own.md")
	if err != nil {
		t.Fatal(err)
	}
	custom, err := os.ReadFile("testdata/custom.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	_, body, _ := strings.Cut(string(custom), "\ndatasets:")
	if block != "datasets:"+body {
		t.Error("docs/models-own.md's example differs from testdata/custom.yaml")
	}

	// On its own a file may not name shipped models.
	_, err = Parse(strings.NewReader("recipes:\n  x:\n    model: resnet50\n"))
	if err == nil || !strings.Contains(err.Error(), `line 3: recipes.x.model: unknown model "resnet50"`) {
		t.Errorf("Parse of a recipe naming a shipped model: %v", err)
	}
}

func TestLoad(t *testing.T) {
	p, err := Load("testdata/load", "testdata/custom.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := p.Dataset("imagenet-1k")
	if d.CPUSecondsPerSample != units.Millisecond || d.Description != "ImageNet with DALI-class decoding" {
		t.Errorf("imagenet-1k not replaced: %+v", d)
	}
	r, err := p.Recipe("goyal-resnet50-8k")
	if err != nil {
		t.Fatal(err)
	}
	// 32 × 256 = 8192 on the shipped resnet50 and imagenet-1k:
	// 90 × ⌈1281167/8192⌉ = 90 × 157.
	if r.GlobalBatch != 8192 || r.Steps(8192) != 90*157 {
		t.Errorf("goyal: global %d, %d steps", r.GlobalBatch, r.Steps(8192))
	}
	if _, err := p.Recipe("mlp-cifar-sgd"); err != nil {
		t.Error(err)
	}
	// Shipped entries are still there.
	if _, err := p.Recipe("mlperf-v0.7-resnet50"); err != nil {
		t.Error(err)
	}
	// Loading nothing is Default.
	q, err := Load()
	if err != nil || !reflect.DeepEqual(q.ModelNames(), mustDefault(t).ModelNames()) {
		t.Errorf("Load() = %v", err)
	}

	_, err = Load("testdata/load-bad")
	want := filepath.Join("testdata", "load-bad", "bad.yaml") + `: line 3: recipes.typo.model: unknown model "resnet-50"; did you mean "resnet50"?`
	if err == nil || err.Error() != want {
		t.Errorf("Load(load-bad) = %v\nwant %s", err, want)
	}
	if _, err := Load("testdata/no-such-dir"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing path = %v, want not-exist", err)
	}
	// A directory with no profiles in it is a mistake in the path, not an
	// empty addition.
	empty := t.TempDir()
	if _, err := Load(empty); err == nil || err.Error() != "profiles directory "+empty+" has no *.yaml or *.yml files" {
		t.Errorf("Load of a directory without YAML = %v", err)
	}
	_, err = Load("testdata/errors/unknown-model.yaml")
	if err == nil || !strings.Contains(err.Error(), `unknown-model.yaml: line 19: recipes.mine.model: unknown model "resnet5"`) {
		t.Errorf("Load of a bad file = %v", err)
	}
}

func mustDefault(t *testing.T) *Profiles {
	t.Helper()
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidateProgrammatic validates profiles built in Go, without YAML:
// problems have paths but no lines.
func TestValidateProgrammatic(t *testing.T) {
	p := &Profiles{
		Datasets: map[string]*Dataset{"d": {Name: "d", SampleUnit: Image, TrainSamples: 10, BytesPerSample: 1, InputShape: []int{1}}},
		Models: map[string]*Model{"m": {Name: "m", Task: "t", Dataset: "d", Params: 10, ForwardFLOPs: 1,
			Activations: Activations{FP32: 1}, Class: MLP, Layers: []Layer{{Name: "a", Params: 4}, {Name: "a", Params: 5}}}},
		Recipes: map[string]*Recipe{"r": nil},
	}
	err := p.Validate()
	want := "3 problems:\n  models.m.layers[1].name: layer \"a\" listed twice (also layers[0])\n" +
		"  models.m.layers: layers sum to 9 parameters, but params is 10 (off by -1)\n  recipes.r: empty entry"
	if err == nil || err.Error() != want {
		t.Errorf("Validate() =\n%v\nwant\n%s", err, want)
	}
}

// TestDuplicateShipped checks that two embedded files defining one name
// is an error, while a user file may replace a shipped entry.
func TestDuplicateShipped(t *testing.T) {
	a, err := decode(strings.NewReader("datasets:\n  d: {train_samples: 1, bytes_per_sample: 1 B, input_shape: [1]}\n"), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := decode(strings.NewReader("# b\ndatasets:\n  d: {train_samples: 2, bytes_per_sample: 1 B, input_shape: [1]}\n"), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := newProfiles()
	if err := p.merge(a, false); err != nil {
		t.Fatal(err)
	}
	err = p.merge(b, false)
	if err == nil || err.Error() != "b.yaml: line 3: datasets.d: defined again (first in a.yaml)" {
		t.Errorf("duplicate merge = %v", err)
	}
	if err := p.merge(b, true); err != nil || p.Datasets["d"].TrainSamples != 2 {
		t.Errorf("override merge = %v, train samples %d", err, p.Datasets["d"].TrainSamples)
	}
}

// TestLoadWith merges a profiles section decoded as part of another
// document, as a scenario file does, and locates its problems there.
func TestLoadWith(t *testing.T) {
	const src = `name: my-scenario
profiles:
  recipes:
    mine:
      model: %s
      source: test
      optimizer: momentum
      per_device_batch: 32
      devices: 8
      base_lr: 0.1
      momentum: 0.9
      schedule: {kind: constant}
      epochs: 10
      targets: [{metric: top1, value: 0.5}]
`
	type scenario struct {
		Name     string    `yaml:"name"`
		Profiles *Document `yaml:"profiles"`
	}
	load := func(modelName string) (*Profiles, error) {
		var s scenario
		root, err := config.Decode(strings.NewReader(strings.Replace(src, "%s", modelName, 1)), &s)
		if err != nil {
			t.Fatal(err)
		}
		sec := root.Content[0].Content[3] // the profiles mapping
		in := Inline{Document: s.Profiles, File: "s.yaml", Root: sec}
		return LoadWith([]string{"testdata/load"}, []Inline{in})
	}
	p, err := load("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Recipe("mine")
	if err != nil || r.GlobalBatch != 256 || r.Steps(256) != 10*5005 {
		t.Errorf("inline recipe: %v, global %d", err, r.GlobalBatch)
	}
	if _, err := p.Recipe("goyal-resnet50-8k"); err != nil {
		t.Errorf("files before inline documents: %v", err)
	}
	_, err = load("resnet5")
	want := `s.yaml: line 5: recipes.mine.model: unknown model "resnet5"; did you mean "resnet50"?`
	if err == nil || err.Error() != want {
		t.Errorf("LoadWith = %v\nwant %s", err, want)
	}
}

// TestSampleUnit: a model's samples are those of its dataset, as
// datasets.yaml gives them (transformer-base counts token pairs, gnmt
// sentence pairs, resnet50 images); an unknown model is an error.
func TestSampleUnit(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]SampleUnit{"transformer-base": Token, "gnmt": Sentence, "resnet50": Image} {
		if got, err := p.SampleUnit(name); err != nil || got != want {
			t.Errorf("SampleUnit(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	var ue *UnknownError
	if _, err := p.SampleUnit("resnet51"); !errors.As(err, &ue) || ue.Kind != "model" {
		t.Errorf("SampleUnit(resnet51): %v, want an unknown model", err)
	}
}
