package benchlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
)

// Kinds of record.
const (
	KindHeader      = "header"      // describes the run and the machine; first in a file
	KindStep        = "step"        // one timed training step
	KindMeasurement = "measurement" // the summary of timed steps at one configuration
	KindConvergence = "convergence" // steps to reach a target accuracy at one global batch
	KindOOM         = "oom"         // a configuration that ran out of device memory
	KindLink        = "link"        // a probe of a link between workers (Record.Link)
	KindEnd         = "end"         // how the log ended (Record.Complete, Record.Reason); last in a file
)

// InStep is the label of a record of independent workers kept in step
// (transport "none"): its value is the transport over which they met once
// a step, exchanging nothing else.
const InStep = "in_step"

// NodesLabel is the label fit gives the groups of records measured on
// more than one node (Record.Nodes): its value is the node count, so that
// W devices on one node and W on several, whose steps exchange gradients
// over different links, are fitted apart.
const NodesLabel = "nodes"

// Kinds lists the valid values of Record.Kind.
var Kinds = []string{KindHeader, KindStep, KindMeasurement, KindConvergence, KindOOM, KindLink, KindEnd}

// Record is one line of a bench log. Fields that do not apply to a kind are
// left zero and omitted from the JSON. Quantities are plain numbers in the
// unit that their JSON name ends with (_s seconds, _bytes bytes), so that
// any program, the Python bench script included, can write them.
type Record struct {
	Kind string `json:"kind"`
	// Run identifies the run a record belongs to; every record of a file
	// normally has the same one.
	Run string `json:"run,omitempty"`

	// Header fields.
	Tool    string         `json:"tool,omitempty"`    // program that wrote the log, e.g. "scaleplan-engine", "torchbench"
	Machine *Machine       `json:"machine,omitempty"` // where it ran
	Config  map[string]any `json:"config,omitempty"`  // the run's full configuration; Decode says how its numbers read back

	// What was measured.
	Model     string `json:"model,omitempty"`     // model name, e.g. "mlp", "resnet50"
	Device    string `json:"device,omitempty"`    // device kind, e.g. "localhost", "H100-SXM5-80GB"
	Precision string `json:"precision,omitempty"` // fp32, tf32, fp16, bf16, amp
	Transport string `json:"transport,omitempty"` // how workers exchanged gradients: inproc, tcp, nccl, gloo; none for workers that exchanged nothing (label InStep: over which they met)
	Workers   int    `json:"workers,omitempty"`   // data-parallel workers (devices), over every node: the world size
	// Nodes is the number of machines the workers ran on; 0 where the log
	// does not say (read as one, or as the log's device count says).
	Nodes int `json:"nodes,omitempty"`
	// DevicesPerNode is the workers on each of the Nodes; 0 where the log
	// does not say or the nodes ran different counts. With both set,
	// Workers is Nodes × DevicesPerNode.
	DevicesPerNode int `json:"devices_per_node,omitempty"`
	Batch          int `json:"batch,omitempty"`        // per-worker batch, samples
	GlobalBatch    int `json:"global_batch,omitempty"` // samples per optimizer step over all workers
	Accumulate     int `json:"accumulate,omitempty"`   // micro-batches per optimizer step; 0 means 1

	// Step and measurement fields.
	Step          int     `json:"step,omitempty"`            // step index (step records)
	Steps         int     `json:"steps,omitempty"`           // timed steps summarised (measurement records)
	StepTime      float64 `json:"step_time_s,omitempty"`     // seconds per step (mean for a measurement)
	StepTimeStd   float64 `json:"step_time_std_s,omitempty"` // standard deviation of step time, seconds
	Phases        *Phases `json:"phases,omitempty"`          // where a step's time went
	SamplesPerSec float64 `json:"samples_per_s,omitempty"`   // training throughput, samples per second over all workers
	PeakMemory    float64 `json:"peak_memory_bytes,omitempty"`

	// Convergence fields.
	Target        float64 `json:"target,omitempty"`          // target validation accuracy, fraction in (0, 1]
	Accuracy      float64 `json:"accuracy,omitempty"`        // best validation accuracy reached, fraction
	Reached       bool    `json:"reached,omitempty"`         // whether Target was reached
	StepsToTarget int     `json:"steps_to_target,omitempty"` // steps when Target was first reached, or the cap if not
	LearningRate  float64 `json:"learning_rate,omitempty"`   // learning rate chosen for this batch

	// Labels are free-form keys a user can group fits by.
	Labels map[string]string `json:"labels,omitempty"`

	// Error says why a configuration failed (oom records).
	Error string `json:"error,omitempty"`

	// Link is what a link record measured over Transport.
	Link *Link `json:"link,omitempty"`

	// End fields. Complete says whether the run wrote every record it
	// meant to; false marks a log cut short by an interrupt or an error,
	// whose records are what was measured before it. Reason says why.
	// Only end records have them; a log without an end record reads as
	// complete (Incomplete).
	Complete *bool  `json:"complete,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// End returns the end record of a log of run: complete, or cut short for
// reason.
func End(run string, complete bool, reason string) Record {
	return Record{Kind: KindEnd, Run: run, Complete: &complete, Reason: reason}
}

// Incomplete reports whether r is an end record that marks its log
// incomplete, and why.
func (r *Record) Incomplete() (reason string, ok bool) {
	if r.Kind != KindEnd || r.Complete == nil || *r.Complete {
		return "", false
	}
	return r.Reason, true
}

// Link is a probe of the link between two ranks: the median time of a ring
// step at a small and a large message, and the latency and bandwidth a
// line through the two gives, time = latency + bytes/bandwidth.
type Link struct {
	// Round is the round of a measurement in rounds the probe ended (1 for
	// the first); 0 when the run had no rounds.
	Round      int     `json:"round,omitempty"`
	SmallBytes int     `json:"small_bytes"`
	SmallTime  float64 `json:"small_s"`
	LargeBytes int     `json:"large_bytes"`
	LargeTime  float64 `json:"large_s"`
	EvictBytes int     `json:"evict_bytes,omitempty"` // written before every step, to put the messages out of the cache; 0: they were in it
	Latency    float64 `json:"latency_s"`
	Bandwidth  float64 `json:"bandwidth_bytes_per_s"`
}

// Phases splits a step's time, in seconds. Phases that overlap (all-reduce
// running during backward) may sum to more than the step.
type Phases struct {
	DataWait  float64 `json:"data_wait_s,omitempty"`
	Forward   float64 `json:"forward_s,omitempty"`
	Backward  float64 `json:"backward_s,omitempty"`
	AllReduce float64 `json:"allreduce_s,omitempty"`
	// AllReduceWait is the part of AllReduce not hidden behind the
	// backward pass: from its end to the end of the last all-reduce.
	AllReduceWait float64 `json:"allreduce_wait_s,omitempty"`
	Update        float64 `json:"update_s,omitempty"`
}

// Machine describes the computer a log was measured on.
type Machine struct {
	Host         string  `json:"host,omitempty"`
	OS           string  `json:"os,omitempty"`
	Arch         string  `json:"arch,omitempty"`
	CPU          string  `json:"cpu,omitempty"`
	Cores        int     `json:"cores,omitempty"`
	DeviceName   string  `json:"device_name,omitempty"`
	DeviceCount  int     `json:"device_count,omitempty"`
	DeviceMemory float64 `json:"device_memory_bytes,omitempty"`
	Driver       string  `json:"driver,omitempty"`
	CUDA         string  `json:"cuda,omitempty"`
	Framework    string  `json:"framework,omitempty"` // e.g. "go1.26.8 gonum", "torch 2.5.1"
	Backend      string  `json:"backend,omitempty"`   // e.g. "gonum", "openblas"
	// HostCosts is the host's cost per operator of eager PyTorch,
	// microseconds by quantity, as engine/torchbench's torchhost.py
	// measures it (engine/torchbench writes it on CUDA devices); nil when
	// not measured. At most MaxHostCosts quantities.
	HostCosts map[string]float64 `json:"host_costs,omitempty"`
}

// MaxHostCosts bounds Machine.HostCosts: torchhost.py writes 18
// quantities.
const MaxHostCosts = 64

// validate reports host costs that are too many, unnamed, or not finite
// numbers of microseconds within ±10^6.
func (m *Machine) validate() error {
	if m == nil {
		return nil
	}
	if len(m.HostCosts) > MaxHostCosts {
		return fmt.Errorf("machine.host_costs: %d quantities, at most %d", len(m.HostCosts), MaxHostCosts)
	}
	for k, v := range m.HostCosts {
		if k == "" || len(k) > 64 {
			return fmt.Errorf("machine.host_costs: quantity %.64q: want a name of 1 to 64 bytes", k)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return fmt.Errorf("machine.host_costs.%s = %v: want microseconds within ±1e6", k, v)
		}
	}
	return nil
}

// Validate reports the first thing wrong with r: an unknown kind, a
// negative or non-finite number, or a measurement without a throughput.
func (r *Record) Validate() error {
	switch r.Kind {
	case KindHeader, KindStep, KindMeasurement, KindConvergence, KindOOM, KindLink, KindEnd:
	case "":
		return errors.New("missing \"kind\" (want one of " + strings.Join(Kinds, ", ") + ")")
	default:
		return fmt.Errorf("unknown kind %q (want one of %s)", r.Kind, strings.Join(Kinds, ", "))
	}
	nums := []struct {
		name string
		v    float64
	}{
		{"workers", float64(r.Workers)}, {"nodes", float64(r.Nodes)}, {"devices_per_node", float64(r.DevicesPerNode)}, {"batch", float64(r.Batch)}, {"global_batch", float64(r.GlobalBatch)},
		{"accumulate", float64(r.Accumulate)}, {"step", float64(r.Step)}, {"steps", float64(r.Steps)},
		{"step_time_s", r.StepTime}, {"step_time_std_s", r.StepTimeStd}, {"samples_per_s", r.SamplesPerSec},
		{"peak_memory_bytes", r.PeakMemory}, {"target", r.Target}, {"accuracy", r.Accuracy},
		{"steps_to_target", float64(r.StepsToTarget)}, {"learning_rate", r.LearningRate},
	}
	if p := r.Phases; p != nil {
		nums = append(nums, []struct {
			name string
			v    float64
		}{{"phases.data_wait_s", p.DataWait}, {"phases.forward_s", p.Forward}, {"phases.backward_s", p.Backward},
			{"phases.allreduce_s", p.AllReduce}, {"phases.allreduce_wait_s", p.AllReduceWait}, {"phases.update_s", p.Update}}...)
	}
	for _, n := range nums {
		if n.v < 0 || math.IsNaN(n.v) || math.IsInf(n.v, 0) {
			return fmt.Errorf("%s = %v: must be a finite number >= 0", n.name, n.v)
		}
	}
	if err := r.validatePlacement(); err != nil {
		return err
	}
	if err := r.Machine.validate(); err != nil {
		return err
	}
	switch r.Kind {
	case KindStep, KindMeasurement:
		if r.Batch <= 0 && r.GlobalBatch <= 0 {
			return fmt.Errorf("%s record without batch or global_batch", r.Kind)
		}
		if r.StepTime <= 0 && r.SamplesPerSec <= 0 {
			return fmt.Errorf("%s record without step_time_s or samples_per_s", r.Kind)
		}
	case KindConvergence:
		if r.GlobalBatch <= 0 && r.Batch <= 0 {
			return errors.New("convergence record without global_batch")
		}
		if r.StepsToTarget <= 0 {
			return errors.New("convergence record without steps_to_target")
		}
	case KindLink:
		if err := r.Link.validate(r.Transport); err != nil {
			return err
		}
	}
	if r.Link != nil && r.Kind != KindLink {
		return fmt.Errorf("%s record with a link: only link records have one", r.Kind)
	}
	if r.Kind == KindEnd && r.Complete == nil {
		return errors.New("end record without \"complete\" (true or false)")
	}
	if r.Kind != KindEnd && (r.Complete != nil || r.Reason != "") {
		return fmt.Errorf("%s record with \"complete\" or \"reason\": only end records have them", r.Kind)
	}
	if r.Accuracy > 1 || r.Target > 1 {
		return fmt.Errorf("accuracy %v, target %v: must be fractions in [0, 1]", r.Accuracy, r.Target)
	}
	return nil
}

// validatePlacement reports a placement that does not add up: more nodes
// than workers, or, with both counts per node and nodes, workers that are
// not nodes × devices_per_node.
func (r *Record) validatePlacement() error {
	if r.Workers > 0 && r.Nodes > r.Workers {
		return fmt.Errorf("nodes %d: more than the %d workers", r.Nodes, r.Workers)
	}
	if r.Nodes > 0 && r.DevicesPerNode > 0 && r.Workers > 0 && (r.Workers%r.Nodes != 0 || r.Workers/r.Nodes != r.DevicesPerNode) {
		return fmt.Errorf("workers %d: want nodes %d × devices_per_node %d = %d", r.Workers, r.Nodes, r.DevicesPerNode, r.Nodes*r.DevicesPerNode)
	}
	return nil
}

// validate reports the first thing wrong with the link of a link record
// over transport: none, no transport, a message size that is not positive
// or a small one not under the large one, a time or a rate that is not a
// positive finite number (a latency may be 0), or a negative round or
// eviction.
func (k *Link) validate(transport string) error {
	if k == nil {
		return errors.New("link record without \"link\"")
	}
	if transport == "" {
		return errors.New("link record without transport")
	}
	if k.SmallBytes <= 0 || k.LargeBytes <= k.SmallBytes {
		return fmt.Errorf("link.small_bytes %d, link.large_bytes %d: want 0 < small < large", k.SmallBytes, k.LargeBytes)
	}
	for _, n := range []struct {
		name string
		v    float64
		zero bool
	}{{"link.small_s", k.SmallTime, false}, {"link.large_s", k.LargeTime, false}, {"link.latency_s", k.Latency, true}, {"link.bandwidth_bytes_per_s", k.Bandwidth, false}} {
		if n.v < 0 || n.v == 0 && !n.zero || math.IsNaN(n.v) || math.IsInf(n.v, 0) {
			bound := "> 0"
			if n.zero {
				bound = ">= 0"
			}
			return fmt.Errorf("%s = %v: must be a finite number %s", n.name, n.v, bound)
		}
	}
	if k.Round < 0 || k.EvictBytes < 0 {
		return fmt.Errorf("link.round %d, link.evict_bytes %d: must be >= 0", k.Round, k.EvictBytes)
	}
	return nil
}

// EffectiveGlobalBatch returns GlobalBatch, or Batch × Workers × Accumulate
// when GlobalBatch is not set.
func (r *Record) EffectiveGlobalBatch() int {
	if r.GlobalBatch > 0 {
		return r.GlobalBatch
	}
	w, a := max(r.Workers, 1), max(r.Accumulate, 1)
	return r.Batch * w * a
}

// Throughput returns SamplesPerSec, or the global batch over the step time
// when SamplesPerSec is not set.
func (r *Record) Throughput() float64 {
	if r.SamplesPerSec > 0 {
		return r.SamplesPerSec
	}
	if r.StepTime > 0 {
		return float64(r.EffectiveGlobalBatch()) / r.StepTime
	}
	return 0
}

// Writer writes records as JSON lines.
type Writer struct {
	w io.Writer
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write validates r and writes it as one line.
func (w *Writer) Write(r Record) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("benchlog: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("benchlog: %w", err)
	}
	b = append(b, '\n')
	_, err = w.w.Write(b)
	return err
}

// LineError is a line of a log that could not be read.
type LineError struct {
	Line int // 1-based line number
	// Text is the line, cut when longer: by Reader to its first 120 bytes
	// and "...", by fit/logs to its first 80 bytes (on a character
	// boundary) and "…(N bytes)", N its length.
	Text string
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d: %v: %q", e.Line, e.Err, e.Text)
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader reads records from JSON lines. Blank lines are skipped.
type Reader struct {
	s    *bufio.Scanner
	line int
}

// NewReader returns a Reader that reads from r. Lines may be up to 16 MiB.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 16<<20)
	return &Reader{s: s}
}

// Line returns the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Next returns the next record. At the end it returns io.EOF. A line that is
// not a valid record returns a *LineError; reading may continue after it.
func (r *Reader) Next() (Record, error) {
	for r.s.Scan() {
		r.line++
		b := bytes.TrimSpace(r.s.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := Decode(b)
		if err != nil {
			return Record{}, &LineError{Line: r.line, Text: cut(string(b), 120), Err: err}
		}
		return rec, nil
	}
	if err := r.s.Err(); err != nil {
		return Record{}, fmt.Errorf("line %d: %w", r.line+1, err)
	}
	return Record{}, io.EOF
}

// Decode parses and validates one JSON record. Unknown fields are errors.
// The numbers of Config read back as float64, except integers that a
// float64 would write back with other digits (a 64-bit seed, most
// integers above 2^53): those stay json.Number, so that a record is
// written back digit for digit.
func Decode(b []byte) (Record, error) {
	var rec Record
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	d.UseNumber()
	if err := d.Decode(&rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Record{}, fmt.Errorf("%s: want %s, got %s", te.Field, jsonWant(te.Type), jsonGot(te.Value))
		}
		return Record{}, err
	}
	if d.More() {
		return Record{}, errors.New("trailing data after the record")
	}
	if err := plainNumbers("config", rec.Config); err != nil {
		return Record{}, err
	}
	if err := rec.Validate(); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// plainNumbers replaces the json.Numbers that UseNumber left in the maps
// and slices under v (at path) by float64, as a plain decode would give,
// except an integer whose float64 would be written back with other digits
// (most above 2^53): that one stays a json.Number, which json.Marshal
// writes as it was read.
func plainNumbers(path string, v any) error {
	set := func(path string, x any, put func(any)) error {
		if n, ok := x.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				return fmt.Errorf("%s: number %s out of range", path, n)
			}
			if !strings.ContainsAny(string(n), ".eE") {
				if back, err := json.Marshal(f); err != nil || string(back) != string(n) {
					return nil
				}
			}
			put(f)
			return nil
		}
		return plainNumbers(path, x)
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if err := set(path+"."+k, x, func(y any) { v[k] = y }); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := set(fmt.Sprintf("%s[%d]", path, i), x, func(y any) { v[i] = y }); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonWant names what a field of type t takes in JSON.
func jsonWant(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if w, ok := jsonWords[t.Kind()]; ok {
		return w
	}
	if k := t.Kind(); k >= reflect.Int && k <= reflect.Uint64 {
		return "a whole number"
	}
	return t.String()
}

// jsonWords names what JSON value a Go type of each kind but the integers
// takes.
var jsonWords = map[reflect.Kind]string{
	reflect.Float32: "a number", reflect.Float64: "a number",
	reflect.String: "a string", reflect.Bool: "true or false",
	reflect.Slice: "an array", reflect.Array: "an array",
	reflect.Struct: "an object", reflect.Map: "an object",
}

// jsonGot names a JSON value as encoding/json describes it in an
// UnmarshalTypeError ("string", "number 64.5", "array", ...).
func jsonGot(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	}
	return "a " + v
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
