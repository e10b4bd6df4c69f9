package calib

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/atomicfile"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// DefaultLevel is the confidence level of intervals when a file gives none.
const DefaultLevel = 0.95

// Calibration is the file `scaleplan fit --out` writes and a scenario
// references, so that the simulator uses fitted v0 and t (and a fitted
// steps curve) instead of rooflines. Intervals are at Level.
//
//	level: 0.95
//	throughput:
//	  - model: resnet50
//	    device: V100
//	    devices: 1
//	    v0: 258.1
//	    v0_interval: [257.3, 258.9]
//	    t: 54 ms
//	    t_interval: [53.4 ms, 54.6 ms]
//	    r2: 0.9991
//	    points: 12
//	    batches: [8, 256]
//	    source: v100.jsonl
//	steps:
//	  - model: resnet50
//	    s_min: 1200
//	    b_noise: 4096
//	    max_batch: 32768
//	fabric:
//	  - system: dgx-h100
//	    level: inter
//	    bandwidth: 46 GB/s
//	    latency: 7 us
//	    algorithm: ring
//	    tests: 1
//	    sizes: 16
//	    source: nccl.txt
type Calibration struct {
	// Level is the confidence level of every interval, in (0, 1).
	// Default 0.95.
	Level      float64           `yaml:"level,omitempty"`
	Throughput []ThroughputEntry `yaml:"throughput,omitempty"`
	Comm       []CommEntry       `yaml:"comm,omitempty"`
	Steps      []StepsEntry      `yaml:"steps,omitempty"`
	Fabric     []FabricEntry     `yaml:"fabric,omitempty"`
	Operators  []OperatorsEntry  `yaml:"operators,omitempty"`
	LLM        []LLMEntry        `yaml:"llm,omitempty"`
}

// ThroughputEntry is the throughput law v = b/(b/v0 + t) of one group: b
// is the global batch (samples per step) and v the samples per second of
// the whole device group. A device of the group alone runs at v0/devices
// at infinite batch.
type ThroughputEntry struct {
	Model     string            `yaml:"model"`
	Device    string            `yaml:"device,omitempty"`    // device kind
	Devices   int               `yaml:"devices"`             // device count; 0 if unknown
	Precision string            `yaml:"precision,omitempty"` // fp32, fp16, ...; "" if unknown
	Labels    map[string]string `yaml:"labels,omitempty"`    // the group-by labels

	V0         float64   `yaml:"v0"`                         // samples/s over the device group, at infinite batch
	V0Interval []float64 `yaml:"v0_interval,flow,omitempty"` // [low, high], samples/s
	// V0Unbounded records that the points did not bound v0 at all
	// (fit.ThroughputFit.V0Unbounded): the step time did not grow with the
	// batch, v0 is meaningless and only t is determined. V0Lower is the
	// smallest v0 the points allowed when they gave it no upper limit
	// (v0_interval is then absent), 0 otherwise.
	V0Unbounded bool            `yaml:"v0_unbounded,omitempty"`
	V0Lower     float64         `yaml:"v0_lower,omitempty"`
	T           units.Seconds   `yaml:"t"`                         // fixed time per step
	TInterval   []units.Seconds `yaml:"t_interval,flow,omitempty"` // [low, high]
	R2          float64         `yaml:"r2"`                        // coefficient of determination of v
	Points      int             `yaml:"points"`                    // points in the fit
	Excluded    int             `yaml:"excluded,omitempty"`        // points the law does not explain
	Batches     []int           `yaml:"batches,flow,omitempty"`    // [smallest, largest] global batch fitted
	OOM         int             `yaml:"oom_batch,omitempty"`       // smallest global batch that ran out of memory; 0 if none
	Source      string          `yaml:"source,omitempty"`          // log files, comma-separated
}

// CommEntry is the split of t across device counts of one model and
// device kind: t(p) = t_fixed + 2(p−1)/p · t_comm, t_comm = S/β.
type CommEntry struct {
	Model     string            `yaml:"model"`
	Device    string            `yaml:"device,omitempty"`
	Precision string            `yaml:"precision,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`

	Counts            []int               `yaml:"counts,flow"`                       // device counts fitted
	TFixed            units.Seconds       `yaml:"t_fixed"`                           // part of t that does not grow with p
	TComm             units.Seconds       `yaml:"t_comm"`                            // S/β
	TCommInterval     []units.Seconds     `yaml:"t_comm_interval,flow,omitempty"`    // [low, high]
	GradientSize      units.Bytes         `yaml:"gradient_size,omitempty"`           // S
	Bandwidth         units.BytesPerSec   `yaml:"bandwidth,omitempty"`               // effective all-reduce bandwidth β
	BandwidthInterval []units.BytesPerSec `yaml:"bandwidth_interval,flow,omitempty"` // [low, high]; absent when unbounded
}

// StepsEntry is a steps-to-target curve S(B) = s_min·(1 + b_noise/B), B
// the global batch.
type StepsEntry struct {
	Model  string            `yaml:"model"`
	Target float64           `yaml:"target,omitempty"` // target accuracy, fraction; 0 if unknown
	Labels map[string]string `yaml:"labels,omitempty"`

	SMin           float64   `yaml:"s_min"`                           // steps at infinite batch
	SMinInterval   []float64 `yaml:"s_min_interval,flow,omitempty"`   // [low, high]
	BNoise         float64   `yaml:"b_noise"`                         // noise scale, samples
	BNoiseInterval []float64 `yaml:"b_noise_interval,flow,omitempty"` // [low, high]
	R2             float64   `yaml:"r2"`
	Points         int       `yaml:"points"`              // reached points in the fit
	MaxBatch       int       `yaml:"max_batch,omitempty"` // largest global batch known to reach the target
	Source         string    `yaml:"source,omitempty"`
}

// header is written at the top of every calibration file.
const header = `# scaleplan calibration, written by "scaleplan fit".
# throughput: v = b / (b/v0 + t); b global batch, v samples/s of the device group.
# comm: t(p) = t_fixed + 2(p-1)/p * t_comm; t_comm = gradient_size / bandwidth.
# steps: S(B) = s_min * (1 + b_noise / B); B global batch.
# fabric: the link bandwidth and latency of one level of a system's network
#   that make the simulator's collective times match nccl-tests' times.
# operators: per device and framework mode, each operator class's efficiency
#   and the host's cost per kernel that make the operator model's step times
#   match the measured ones.
# llm: per transformer, system and layout, the factor on the operator model's
#   times that makes the LLM step model's time match the measured step.
`

// Encode writes c as YAML.
func (c *Calibration) Encode(w io.Writer) error {
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return err
	}
	return enc.Close()
}

// WriteFile writes c to the file at path atomically: a reader never
// sees a half-written file and a failed write leaves the old one.
func (c *Calibration) WriteFile(path string) error {
	return atomicfile.Write(path, c.Encode)
}

// ReadFile reads and validates the calibration in the named
// file; errors name the file and the line.
// The file is read through config.MaxFileSize.
func ReadFile(name string) (*Calibration, error) {
	data, err := config.ReadFile(name, "calibration file")
	if err != nil {
		return nil, err
	}
	c, err := Read(bytes.NewReader(data))
	return c, config.InFile(name, err)
}

// Read reads a calibration strictly (unknown keys are errors),
// fills in the default Level and validates it. Every problem is reported
// at once with its YAML path and line.
func Read(r io.Reader) (*Calibration, error) {
	var c Calibration
	root, err := config.Decode(r, &c)
	if err != nil {
		return nil, err
	}
	if c.Level == 0 {
		c.Level = DefaultLevel
	}
	ps := c.validate()
	ps.Locate(root)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate reports every problem of c.
func (c *Calibration) Validate() error {
	return c.validate().Err()
}

func (c *Calibration) validate() *config.Problems {
	ps := &config.Problems{}
	checkInterval := func(path string, iv []float64) { checkPair(ps, path, iv) }
	if !(c.Level > 0 && c.Level < 1) && c.Level != 0 {
		ps.Addf("level", "%v: must be in (0, 1)", c.Level)
	}
	seen := map[string]int{}
	for i, e := range c.Throughput {
		p := fmt.Sprintf("throughput[%d]", i)
		if e.Model == "" {
			ps.Addf(p+".model", "missing")
		}
		if e.Devices < 0 {
			ps.Addf(p+".devices", "%d: must be >= 0", e.Devices)
		}
		if !(e.V0 > 0) || !finite(e.V0) {
			ps.Addf(p+".v0", "%v: must be a finite number > 0 (samples/s)", e.V0)
		}
		if !(e.T >= 0) || !finite(float64(e.T)) {
			ps.Addf(p+".t", "%v: must be a finite time >= 0", e.T)
		}
		checkInterval(p+".v0_interval", e.V0Interval)
		if !(e.V0Lower >= 0) || !finite(e.V0Lower) {
			ps.Addf(p+".v0_lower", "%v: must be a finite number >= 0 (samples/s)", e.V0Lower)
		}
		checkInterval(p+".t_interval", floats(e.TInterval))
		if e.R2 > 1 || math.IsNaN(e.R2) {
			ps.Addf(p+".r2", "%v: must be <= 1", e.R2)
		}
		// One measured throughput is a law too when t is taken as 0
		// (v = v0 at every batch), as a published figure at one batch is.
		if one := e.T == 0 && e.TInterval == nil; e.Points < 2 && !(one && e.Points == 1) {
			ps.Addf(p+".points", "%d: a fit needs at least 2 points (1 with t = 0, one measured throughput)", e.Points)
		}
		if e.Excluded < 0 {
			ps.Addf(p+".excluded", "%d: must be >= 0", e.Excluded)
		}
		if b := e.Batches; b != nil && (len(b) != 2 || b[0] < 1 || b[0] > b[1]) {
			ps.Addf(p+".batches", "%v: want [smallest, largest] with 1 <= smallest <= largest", b)
		}
		if e.OOM < 0 {
			ps.Addf(p+".oom_batch", "%d: must be >= 0", e.OOM)
		}
		k := strings.Join([]string{e.Model, e.Device, strconv.Itoa(e.Devices), e.Precision, LabelString(e.Labels)}, "\x00")
		if j, dup := seen[k]; dup {
			ps.Addf(p, "same model, device, devices, precision and labels as throughput[%d]", j)
		} else {
			seen[k] = i
		}
	}
	for i, e := range c.Comm {
		p := fmt.Sprintf("comm[%d]", i)
		if e.Model == "" {
			ps.Addf(p+".model", "missing")
		}
		if len(e.Counts) < 2 {
			ps.Addf(p+".counts", "%v: want two or more device counts", e.Counts)
		}
		for _, n := range e.Counts {
			if n < 1 {
				ps.Addf(p+".counts", "%v: counts must be >= 1", e.Counts)
				break
			}
		}
		if !finite(float64(e.TFixed)) {
			ps.Addf(p+".t_fixed", "%v: must be finite", e.TFixed)
		}
		if !finite(float64(e.TComm)) {
			ps.Addf(p+".t_comm", "%v: must be finite", e.TComm)
		}
		if iv := floats(e.TCommInterval); iv != nil && (len(iv) != 2 || iv[0] > iv[1] || !finite(iv[0]) || !finite(iv[1])) {
			ps.Addf(p+".t_comm_interval", "%v: want [low, high] with low <= high", iv)
		}
		if !(e.GradientSize >= 0) || !finite(float64(e.GradientSize)) {
			ps.Addf(p+".gradient_size", "%v: must be >= 0", e.GradientSize)
		}
		if !(e.Bandwidth >= 0) || !finite(float64(e.Bandwidth)) {
			ps.Addf(p+".bandwidth", "%v: must be a finite rate >= 0", e.Bandwidth)
		}
		checkInterval(p+".bandwidth_interval", floats(e.BandwidthInterval))
	}
	c.validateFabric(ps)
	c.validateOperators(ps)
	c.validateLLM(ps)
	seen = map[string]int{}
	for i, e := range c.Steps {
		p := fmt.Sprintf("steps[%d]", i)
		if e.Model == "" {
			ps.Addf(p+".model", "missing")
		}
		if !(e.Target >= 0 && e.Target <= 1) {
			ps.Addf(p+".target", "%v: must be a fraction in [0, 1]", e.Target)
		}
		if !(e.SMin > 0) || !finite(e.SMin) {
			ps.Addf(p+".s_min", "%v: must be a finite number > 0", e.SMin)
		}
		if !(e.BNoise >= 0) || !finite(e.BNoise) {
			ps.Addf(p+".b_noise", "%v: must be a finite number >= 0 (samples)", e.BNoise)
		}
		checkInterval(p+".s_min_interval", e.SMinInterval)
		checkInterval(p+".b_noise_interval", e.BNoiseInterval)
		if e.R2 > 1 || math.IsNaN(e.R2) {
			ps.Addf(p+".r2", "%v: must be <= 1", e.R2)
		}
		if e.Points < 2 {
			ps.Addf(p+".points", "%d: a fit needs at least 2 points", e.Points)
		}
		if e.MaxBatch < 0 {
			ps.Addf(p+".max_batch", "%d: must be >= 0", e.MaxBatch)
		}
		k := e.Model + "\x00" + strconv.FormatFloat(e.Target, 'g', -1, 64) + "\x00" + LabelString(e.Labels)
		if j, dup := seen[k]; dup {
			ps.Addf(p, "same model, target and labels as steps[%d]", j)
		} else {
			seen[k] = i
		}
	}
	return ps
}

// finite says x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// floats returns the quantities of s as float64s; nil for nil.
func floats[T ~float64](s []T) []float64 {
	if s == nil {
		return nil
	}
	f := make([]float64, len(s))
	for i, v := range s {
		f[i] = float64(v)
	}
	return f
}

// LookupThroughput returns the first throughput entry of model on devices
// devices of kind device. An entry's empty precision matches any
// precision, and so does an empty precision argument; labels are not
// compared.
func (c *Calibration) LookupThroughput(model, device string, devices int, precision string) (ThroughputEntry, bool) {
	for _, e := range c.Throughput {
		if e.Model == model && e.Device == device && e.Devices == devices &&
			(e.Precision == "" || precision == "" || e.Precision == precision) {
			return e, true
		}
	}
	return ThroughputEntry{}, false
}

// LookupSteps returns the first steps curve of model.
func (c *Calibration) LookupSteps(model string) (StepsEntry, bool) {
	for _, e := range c.Steps {
		if e.Model == model {
			return e, true
		}
	}
	return StepsEntry{}, false
}

// SampleLabel is the label of a log's records, and so of the throughput
// entries fitted to them, that says what one of the log's samples is
// where it is not what the model's profile counts: engine/torchbench's
// transformer-base counts sentence pairs ("sentence-pair"), its profile
// token pairs. fit groups by it whether or not it is asked to, and
// scenarios.SampleApplies matches it to a dataset's unit.
const SampleLabel = "sample"

// RunLabels are the labels of a log's records that say how the model was
// run beyond its precision: engine/torchbench writes channels_last=true
// for convolutions in the channels_last memory format, compile=true for
// a model under torch.compile and attention=sdpa for a GPT model whose
// attention ran as PyTorch's fused scaled_dot_product_attention. Each
// changes the kernels a step runs (on an H200, ResNet-50 in amp-fp16
// trains 2.2 times as fast in channels_last), so fit groups by them, as by
// SampleLabel, whether or not it is asked to.
var RunLabels = []string{"channels_last", "compile", "attention"}

// KeptLabels are the labels fit keeps in a group's key whether or not it
// is asked to: SampleLabel, then RunLabels.
var KeptLabels = append([]string{SampleLabel}, RunLabels...)

// RunVariant returns the RunLabels among labels as words, "channels_last
// compile": the name alone for the value "true", name=value otherwise; ""
// when there are none.
func RunVariant(labels map[string]string) string {
	var parts []string
	for _, k := range RunLabels {
		switch v := labels[k]; v {
		case "":
		case "true":
			parts = append(parts, k)
		default:
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// LabelString returns the labels as "k=v k=v", sorted by key.
func LabelString(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, " ")
}
