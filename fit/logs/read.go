package logs

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// Format is a kind of log that Read understands.
type Format string

// The formats.
const (
	// Benchlog is the JSON-lines bench log of internal/benchlog, written by
	// the reference engine and the bench scripts.
	Benchlog Format = "benchlog"
	// MLPerf is an MLPerf Training result log: ":::MLLOG {...}" lines as
	// written by the mlperf_logging library.
	MLPerf Format = "mlperf"
	// MLPerfV06 is an MLPerf Training v0.6 result log: ":::MLL SECONDS KEY:
	// {json}" lines as written by the mlperf_compliance library.
	MLPerfV06 Format = "mlperf-v0.6"
	// TFCNN is the output of tf_cnn_benchmarks.
	TFCNN Format = "tf_cnn_benchmarks"
	// Horovod is the output of Horovod's pytorch_synthetic_benchmark.py (and
	// of the scripts that copy it).
	Horovod Format = "horovod"
	// Torchvision is the output of torchvision's reference training scripts
	// (references/*/train.py: PyTorch, DistributedDataParallel under
	// torchrun), whose MetricLogger prints "Epoch: [e]  [i/N] ... time: T
	// data: D" lines.
	Torchvision Format = "torchvision"
	// HFTrainer is the console output of the Hugging Face Trainer
	// (transformers' Trainer and the example scripts that run it): its
	// "***** Running training *****" header and the dictionaries it logs.
	HFTrainer Format = "hf-trainer"
	// Megatron is the output of Megatron-LM's training loop (and of the
	// frameworks built on it): "iteration N/M | ... | elapsed time per
	// iteration (ms): T | ... | global batch size: B |" lines.
	Megatron Format = "megatron"
	// DeepSpeed is the output of a training script on DeepSpeed's engine:
	// its configuration and its ThroughputTimer's "RunningAvgSamplesPerSec"
	// lines.
	DeepSpeed Format = "deepspeed"
	// Torchtitan is the console output of torchtitan, PyTorch's platform
	// for training large language models: its "step: N  loss: L ...  tps:
	// T" lines after its device mesh and batch sizes.
	Torchtitan Format = "torchtitan"
	// Lightning is a PyTorch Lightning metrics.csv (its CSVLogger) with
	// the columns of its ThroughputMonitor callback.
	Lightning Format = "lightning"
	// NCCLTests is the output of NVIDIA's nccl-tests (and ROCm's
	// rccl-tests): collectives timed at a sweep of message sizes.
	NCCLTests Format = "nccl-tests"
	// Placements is a table of step and gradient-synchronisation times per
	// placement of devices over nodes and batch per device, under the
	// header "placement,local_bsz,step_time,sync_time" (the Pollux
	// artifact's simulator traces, petuum/adaptdl branch osdi21-artifact,
	// simulator/traces/MODEL/placements.csv).
	Placements Format = "placements"
	// CSV is comma-, semicolon- or tab-separated values under a header that
	// names the columns.
	CSV Format = "csv"
)

// Formats lists the formats in the order Detect tries them.
var Formats = []Format{Benchlog, MLPerf, MLPerfV06, TFCNN, Horovod, Torchvision, HFTrainer, Megatron, DeepSpeed, Torchtitan, Lightning, NCCLTests, Placements, CSV}

// Describe returns a short description of the format for messages.
func (f Format) Describe() string {
	switch f {
	case Benchlog:
		return "scaleplan bench log (JSON lines)"
	case MLPerf:
		return "MLPerf Training log (:::MLLOG lines)"
	case MLPerfV06:
		return "MLPerf Training v0.6 log (:::MLL lines)"
	case TFCNN:
		return "tf_cnn_benchmarks output"
	case Horovod:
		return "PyTorch/Horovod synthetic benchmark output"
	case Torchvision:
		return "torchvision reference train.py output (PyTorch)"
	case HFTrainer:
		return "Hugging Face Trainer output (transformers)"
	case Megatron:
		return "Megatron-LM training output"
	case DeepSpeed:
		return "DeepSpeed engine output"
	case Torchtitan:
		return "torchtitan output (PyTorch)"
	case Lightning:
		return "PyTorch Lightning metrics.csv (CSVLogger, ThroughputMonitor)"
	case NCCLTests:
		return "nccl-tests output (all_reduce_perf, ...)"
	case Placements:
		return "placement table (placement, local_bsz, step_time, sync_time)"
	case CSV:
		return "CSV with a header"
	}
	return string(f)
}

// expect says what a usable record of the format looks like.
func (f Format) expect() string {
	switch f {
	case Benchlog:
		return `JSON lines such as {"kind":"measurement","batch":64,"step_time_s":0.1}`
	case MLPerf:
		return `":::MLLOG {...}" lines with global_batch_size, train_samples and epoch_start/epoch_stop, block_start/block_stop or run_start/run_stop`
	case MLPerfV06:
		return `":::MLL SECONDS KEY: {...}" lines with global_batch_size and epoch_start/epoch_stop, block_start/block_stop or run_start/run_stop`
	case TFCNN:
		return `"Batch size:", "Devices:" and "total images/sec: X" (or step "images/sec: X +/- Y" lines)`
	case Horovod:
		return `"Batch size: N" and "Total img/sec on N GPU(s): X +-Y" (or "Img/sec per GPU" or "Iter #i" lines)`
	case Torchvision:
		return `"Namespace(... batch_size=N ...)" and "Epoch: [e]  [i/N]  ...  time: T  data: D" lines past iteration 19 of an epoch`
	case HFTrainer:
		return `the "***** Running training *****" header (batch per device, total batch, accumulation, optimization steps) and a {'train_runtime': ...} line`
	case Megatron:
		return `"iteration N/M | ... | elapsed time per iteration (ms): T | ... | global batch size: B |" lines, after Megatron's arguments and "using world size" line`
	case DeepSpeed:
		return `"DeepSpeedEngine configuration:" with train_batch_size and world_size, then "RunningAvgSamplesPerSec=X" lines`
	case Torchtitan:
		return `"Building device mesh with parallelism: ...", "Trainer is initialized with local batch size N, global batch size N, ... sequence length N" and "step: N  loss: L ...  tps: T" lines`
	case Lightning:
		return "a header with " + plTime + ", " + plBatches + ", " + plSamples + " and " + plDeviceRate + " (the ThroughputMonitor callback), then the logger's rows"
	case NCCLTests:
		return `a "#  size  count  type ... time  algbw  busbw ..." header, then a row per message size`
	case Placements:
		return "a header placement,local_bsz,step_time,sync_time, then rows such as 1234,64,0.41,0.05 (one digit a node: its devices)"
	case CSV:
		return "a header naming a batch column (batch, global_batch) and samples_per_s, step_time or steps_to_target, then rows"
	}
	return "a known log format"
}

// MaxQuoted is the number of malformed lines a Log keeps to quote.
const MaxQuoted = 5

// Errors of Read.
var (
	// ErrUnknownFormat: the data is in none of the formats.
	ErrUnknownFormat = errors.New("unrecognized log format")
	// ErrNoRecords: the data is in a known format but holds no usable record.
	ErrNoRecords = errors.New("no usable records")
)

// Log is what a reader found in one file. Every format is turned into
// bench log records: measurements (one per configuration), steps (one per
// timed step), convergence (steps to reach a target) and oom records.
type Log struct {
	Name    string            // file name, as given to Read
	Format  Format            // the format it was read as
	Records []benchlog.Record // in file order; each passes Record.Validate
	Lines   []int             // Lines[i] is the 1-based line Records[i] came from
	Runs    []Run             // training runs with their time to train (MLPerf, torchvision)
	// Collectives are the collective tests of an nccl-tests log.
	Collectives []Collective
	// Placements are the rows of a placement table (Format Placements).
	Placements []PlacementStep

	Malformed int                   // lines that could not be read
	Errors    []*benchlog.LineError // the first MaxQuoted of them
	Notes     []string              // what the reader assumed or could not do

	over bool // more than MaxRecords
}

// Run is one training run of an MLPerf or torchvision log.
type Run struct {
	Line        int           // line of run_stop, or of the last event when the log stops early
	Run         string        // run number within the file, "1", "2", ...
	Model       string        // the catalogue's name of submission_benchmark, e.g. "resnet50"
	Benchmark   string        // submission_benchmark as logged, e.g. "resnet"; torchvision: the model as logged
	Device      string        // submission_platform, e.g. "1xGX2570M5"; torchvision: processes x device, e.g. "8xGPU"
	GlobalBatch int           // global_batch_size, samples
	Epochs      float64       // epochs trained (completed epoch_stop or block_stop epochs)
	Accuracy    float64       // last eval_accuracy, fraction; 0 if none
	Status      string        // run_stop status, "success" or "aborted" (torchvision: "finished"); "" when the log ends before it; StatusUnknown where the log never says
	TimeToTrain units.Seconds // run_stop − run_start (torchvision: "Training time"); 0 when either is missing
	StepTime    units.Seconds // mean step over its measured epochs (or blocks); 0 if none was measured
	DataWait    units.Seconds // of StepTime, the mean wait for data (torchvision's data:); 0 if the log does not say

	// Intervals are the run's measured log intervals in order, the
	// warm-up left out (Megatron-LM: each iteration line but a run's
	// first and the first at each global batch); nil for other formats.
	Intervals []StepInterval

	// Evals are the run's evaluations in order, each after the optimizer
	// steps taken so far (torchvision: one after each epoch). With a
	// target (fit.Options.Target) they give the run's steps to reach it.
	Evals []Eval
}

// StepInterval is one log line's mean step over the iterations it covers.
type StepInterval struct {
	GlobalBatch int           // samples per step
	Iterations  int           // iterations since the last line
	Step        units.Seconds // their mean step
}

// StatusUnknown is the Run.Status of a run whose log does not say whether
// it finished (Lightning's metrics.csv).
const StatusUnknown = "unknown"

// Convergence returns the run's convergence record for target, a fraction
// in (0, 1], and the line it comes from: reached at the steps of its first
// evaluation at or above target, or not reached after the steps of its
// last; its accuracy is the best of all its evaluations. ok is false
// without a target, evaluations or a global batch.
func (r *Run) Convergence(target float64) (rec benchlog.Record, line int, ok bool) {
	if !(target > 0) || len(r.Evals) == 0 || r.GlobalBatch < 1 {
		return benchlog.Record{}, 0, false
	}
	best := 0.0
	for _, e := range r.Evals {
		best = max(best, e.Accuracy)
	}
	rec = benchlog.Record{Kind: benchlog.KindConvergence, Run: r.Run, Model: r.Model, GlobalBatch: r.GlobalBatch, Target: target, Accuracy: best}
	for _, e := range r.Evals {
		if e.Accuracy >= target {
			rec.Reached, rec.StepsToTarget = true, e.Steps
			return rec, e.Line, true
		}
	}
	last := r.Evals[len(r.Evals)-1]
	rec.StepsToTarget = last.Steps
	return rec, last.Line, true
}

// Eval is one evaluation of a training run.
type Eval struct {
	Line     int     // line of the evaluation's accuracy
	Steps    int     // optimizer steps taken before it
	Accuracy float64 // fraction
}

// MalformedSummary returns "N malformed lines" followed by the quoted
// ones, or "" when there are none.
func (lg *Log) MalformedSummary() string {
	if lg.Malformed == 0 {
		return ""
	}
	var b strings.Builder
	if lg.Malformed == 1 {
		b.WriteString("1 malformed line")
	} else {
		fmt.Fprintf(&b, "%d malformed lines", lg.Malformed)
	}
	for i, e := range lg.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	if lg.Malformed > len(lg.Errors) {
		b.WriteString("; ...")
	}
	return b.String()
}

// add appends r (appendRecord) if it is within the bounds of
// checkBounds, else counts line as malformed.
func (lg *Log) add(r benchlog.Record, line int) {
	if err := checkBounds(&r); err != nil {
		lg.malformed(line, nil, err)
		return
	}
	lg.appendRecord(r, line)
}

// appendRecord appends r, whose bounds are checked, unless lg already
// holds MaxRecords records, runs and collective tests: that marks lg over
// the limit, which finish turns into an error.
func (lg *Log) appendRecord(r benchlog.Record, line int) {
	if lg.count() >= MaxRecords {
		lg.over = true
		return
	}
	lg.Records = append(lg.Records, r)
	lg.Lines = append(lg.Lines, line)
}

// count returns the records, runs, collective tests and placement steps
// lg holds, which MaxRecords bounds.
func (lg *Log) count() int {
	return len(lg.Records) + len(lg.Runs) + len(lg.Collectives) + len(lg.Placements)
}

// addValid adds r if it validates, else counts line as malformed.
func (lg *Log) addValid(r benchlog.Record, line int, text []byte) {
	if err := r.Validate(); err != nil {
		lg.malformed(line, text, err)
		return
	}
	lg.add(r, line)
}

func (lg *Log) malformed(line int, text []byte, err error) {
	lg.Malformed++
	if len(lg.Errors) < MaxQuoted {
		lg.Errors = append(lg.Errors, &benchlog.LineError{Line: line, Text: clip(string(bytes.TrimSpace(text))), Err: err})
	}
}

func (lg *Log) notef(format string, args ...any) {
	lg.Notes = append(lg.Notes, fmt.Sprintf(format, args...))
}

// parse reads a log read whole in format f, one that parseFrom does not
// read line by line (it takes CSV, bench logs and unknown formats).
func parse(data []byte, name string, f Format) (*Log, error) {
	lg := &Log{Name: name, Format: f}
	switch f {
	case MLPerf:
		readMLPerf(data, lg, decodeMLLOG)
	case MLPerfV06:
		readMLPerf(data, lg, decodeMLL)
	case TFCNN:
		readTFCNN(data, lg)
	case Horovod:
		readHorovod(data, lg)
	case Torchvision:
		readTorchvision(data, lg)
	case HFTrainer:
		readHFTrainer(data, lg)
	case Megatron:
		readMegatron(data, lg)
	case DeepSpeed:
		readDeepSpeed(data, lg)
	case Torchtitan:
		readTorchtitan(data, lg)
	case Lightning:
		readLightning(data, lg)
	case NCCLTests:
		readNCCL(data, lg)
	}
	return lg.finish()
}

// finish returns lg, or an error if it went over MaxRecords or holds no
// usable record.
func (lg *Log) finish() (*Log, error) {
	if lg.over {
		return nil, fmt.Errorf("%s: more than %d records, runs, collective tests or placement rows (the limit of one log; %s): %w",
			lg.Name, MaxRecords, "split it, or give a CSV whose rows repeat configurations", ErrLimit)
	}
	if lg.count() == 0 {
		msg := fmt.Sprintf("%s: %v in %s: want %s", lg.Name, ErrNoRecords, lg.Format.Describe(), lg.Format.expect())
		if s := lg.MalformedSummary(); s != "" {
			msg += "; " + s
		}
		return nil, &readError{msg: msg, err: ErrNoRecords}
	}
	return lg, nil
}

type readError struct {
	msg string
	err error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.err }

// oneLine joins the errors that are not nil into one, "; " between them,
// since a malformed line's error is printed on one line; it returns nil if
// they all are.
func oneLine(errs []error) error {
	var msgs []string
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
		}
	}
	if msgs == nil {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

func formatNames() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Detect returns the format of data:
//
//   - Benchlog if the first non-blank line starts with "{" but not with
//     "{'" (a Python dictionary);
//   - MLPerf if a line contains ":::MLLOG";
//   - MLPerfV06 if a line contains ":::MLL " (the v0.6 compliance log);
//   - NCCLTests if a comment line names the algbw and busbw columns of
//     nccl-tests' header (or a line "size count type ... algbw busbw",
//     the header printed without its "#");
//   - TFCNN if a line contains "total images/sec:" or a step line
//     "images/sec: X +/- Y (jitter = Z)";
//   - Horovod if a line contains "Img/sec per " or "Total img/sec on ";
//   - Torchvision if a line is a MetricLogger training line, "Epoch: [e]
//     [i/N]" with "time: T  data: D";
//   - HFTrainer if a line holds the Trainer's "***** Running training
//     *****" header or is one of the dictionaries it logs (isHFLog);
//   - Megatron if a line is Megatron's "iteration N/M | ... | elapsed
//     time per iteration (ms): T" line;
//   - DeepSpeed if a line holds DeepSpeed's "RunningAvgSamplesPerSec=";
//   - Torchtitan if a line, its colours taken out, is torchtitan's
//     training step line "step: N  loss: L ... tps: T" (or wps: in older
//     releases);
//   - Lightning if the first non-blank line that is not a # comment is
//     a header with the ThroughputMonitor's train/time, train/batches and
//     train/samples columns (isLightningHeader);
//   - Placements if the first non-blank line that is not a # comment is a
//     header naming placement, local_bsz, step_time and sync_time;
//   - CSV if the first non-blank line that is not a # comment is a header
//     with a batch column and a samples/s, step time or steps column.
//
// Otherwise it returns ErrUnknownFormat with what each format looks like.
func Detect(data []byte) (Format, error) {
	var d detector
	done := false
	lines(data, func(_ int, l []byte) { done = done || d.line(l) })
	return d.result()
}

// detector decides the format of a log from its lines, fed in order; see
// Detect.
type detector struct {
	header                                          []byte // first non-blank line that is not a # comment
	seen, bench                                     bool   // a non-blank line was fed; the first was a bench log's JSON line
	mllog, mll, tf, horovod, tv, hf, mg, ds, tt, nc bool
}

// line feeds the detector one line; it returns true once the format is
// known whatever follows (a bench log, from its first line).
func (d *detector) line(l []byte) bool {
	if t := bytes.TrimSpace(l); len(t) > 0 {
		if !d.seen {
			d.seen = true
			d.bench = t[0] == '{' && !bytes.HasPrefix(t, []byte("{'"))
		}
		if d.header == nil && t[0] != '#' {
			d.header = bytes.Clone(t)
		}
	}
	if d.bench {
		return true
	}
	d.mllog = d.mllog || bytes.Contains(l, mllogMarker)
	d.mll = d.mll || bytes.Contains(l, mllMarker)
	if bytes.Contains(l, []byte("total images/sec:")) || (bytes.Contains(l, []byte("images/sec: ")) && bytes.Contains(l, []byte("(jitter = "))) {
		d.tf = true
	}
	if bytes.Contains(l, []byte("Img/sec per ")) || bytes.Contains(l, []byte("Total img/sec on ")) {
		d.horovod = true
	}
	if !d.tv && bytes.Contains(l, []byte("Epoch: [")) {
		d.tv = tvEpochLine.Match(l) && tvTimeData(string(l)) != nil
	}
	if !d.hf && bytes.Contains(l, []byte("{'")) {
		d.hf = isHFLog(hfSegment(l))
	}
	if !d.hf && bytes.Contains(l, []byte(hfHeader)) {
		d.hf = true
	}
	if !d.mg && bytes.Contains(l, []byte("elapsed time per iteration (ms):")) {
		d.mg = mgIteration.Match(l)
	}
	if !d.ds && bytes.Contains(l, []byte("RunningAvgSamplesPerSec=")) {
		d.ds = true
	}
	if !d.tt && bytes.Contains(l, []byte("step:")) {
		d.tt = isTorchtitanStep(l)
	}
	if !d.nc && bytes.Contains(l, []byte("busbw")) && bytes.Contains(l, []byte("algbw")) {
		d.nc = strings.HasPrefix(ncComment(strings.TrimSpace(string(l))), "#")
	}
	return false
}

// result returns the format of the lines fed, in the order of Detect.
func (d *detector) result() (Format, error) {
	for _, c := range []struct {
		ok bool
		f  Format
	}{
		{d.bench, Benchlog},
		{d.mllog, MLPerf}, {d.mll, MLPerfV06}, {d.nc, NCCLTests}, {d.tf, TFCNN}, {d.horovod, Horovod},
		{d.tv, Torchvision}, {d.hf, HFTrainer}, {d.mg, Megatron}, {d.ds, DeepSpeed}, {d.tt, Torchtitan},
	} {
		if c.ok {
			return c.f, nil
		}
	}
	var asCSV error
	if h := d.header; h != nil {
		if isLightningHeader(string(h)) {
			return Lightning, nil
		}
		if _, ok := placementHeader(string(h)); ok {
			return Placements, nil
		}
		if _, asCSV = parseHeader(string(h)); asCSV == nil {
			return CSV, nil
		}
	}
	var want []string
	for _, f := range Formats {
		want = append(want, f.Describe()+": "+f.expect())
	}
	msg := strings.Join(want, "\n  ")
	if asCSV != nil && !errors.Is(asCSV, errOneColumn) {
		// A first line of several columns was most likely meant as a
		// CSV header: say what it lacks.
		msg += "\n  (the first line, read as a CSV header: " + asCSV.Error() + ")"
	}
	return "", fmt.Errorf("%w; want one of:\n  %s", ErrUnknownFormat, msg)
}

// lines calls fn for every line of data with its 1-based number, without
// the line ending.
func lines(data []byte, fn func(n int, l []byte)) {
	n := 0
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		fn(n, bytes.TrimSuffix(l, []byte("\r")))
	}
}

// readBenchlog reads a bench log's JSON lines as benchlog.Reader does,
// within the limits of lr.
func readBenchlog(lr *lineReader, lg *Log) error {
	for {
		l, ok := lr.next()
		if !ok {
			return lr.err
		}
		b := bytes.TrimSpace(l)
		if len(b) == 0 {
			continue
		}
		rec, err := benchlog.Decode(b)
		switch {
		case err != nil:
			lg.malformed(lr.n, b, err)
		case rec.Kind == benchlog.KindEnd:
			if reason, ok := rec.Incomplete(); ok {
				lg.notef("the log is incomplete (line %d: %s): fitted from the measurements it has", lr.n, reason)
			}
		default:
			lg.add(rec, lr.n)
		}
	}
}
