package logs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
)

// Lines of DeepSpeed's engine (deepspeed/runtime/config.py's print of its
// configuration, utils/timer.py's ThroughputTimer), as rank 0 logs them
// through its logger ("[2026-11-26 06:00:00,123] [INFO] [timer.py:260:stop]
// ...").
var (
	dsConfigLine = regexp.MustCompile(`\[config\.py:\d+:print\]\s{2,}(\w+)\s+(?:\.+\s+)?(.*?)\s*$`)
	dsTimer      = regexp.MustCompile(`(?:global_step=(\d+), )?RunningAvgSamplesPerSec=([^,\s]+), CurrSamplesPerSec=([^,\s]+)`)
	dsStep       = regexp.MustCompile(`\[Rank 0\] step=(\d+), skipped=(\d+)`)
	dsMaxMemory  = regexp.MustCompile(`MaxMemAllocated=([\d.]+)GB`)
	dsBF16       = regexp.MustCompile(`(?:^|\s)enabled=(True|False)`)
)

// dsConfigHeader starts DeepSpeed's print of its configuration.
const dsConfigHeader = "DeepSpeedEngine configuration:"

// DeepSpeedStartStep is the number of steps DeepSpeed's ThroughputTimer
// leaves out of its running average (its start_step, the same default in
// every release): the first steps' compilation and allocations.
const DeepSpeedStartStep = 2

// readDeepSpeed reads the output of a training script on DeepSpeed's
// engine, as rank 0 logs it:
//
//	[...] [INFO] [config.py:1003:print] DeepSpeedEngine configuration:
//	[...] [INFO] [config.py:1003:print]   bfloat16_enabled ............. True
//	[...] [INFO] [config.py:1003:print]   gradient_accumulation_steps .. 4
//	[...] [INFO] [config.py:1003:print]   train_batch_size ............. 256
//	[...] [INFO] [config.py:1003:print]   train_micro_batch_size_per_gpu  8
//	[...] [INFO] [config.py:1003:print]   world_size ................... 8
//	[...] [INFO] [logging.py:128:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]
//	[...] [INFO] [timer.py:264:stop] epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=251.2, CurrSamplesPerSec=252.8, MemAllocated=4.3GB, MaxMemAllocated=38.5GB
//
// Each print of the configuration starts a run. Its ThroughputTimer prints,
// every steps_per_print steps, the samples per second of the last step and
// the mean over every step after the first DeepSpeedStartStep
// (RunningAvgSamplesPerSec, of train_batch_size samples a step). A run
// gives one measurement record, from its last such line: samples/s the
// running average, the step time train_batch_size over it, the steps the
// global step less DeepSpeedStartStep (older releases print no global
// step: the step of the "[Rank 0] step=N" line before it); the devices
// world_size, the batch per device train_micro_batch_size_per_gpu, the
// accumulation gradient_accumulation_steps, the precision bf16 or fp16
// (bfloat16_enabled, or enabled= in bfloat16_config; fp16_enabled), fp32
// with neither, the peak memory the largest MaxMemAllocated (GB of 2^30
// bytes, rank 0's). The log names no model and no device kind (--device
// names it: the records say GPU).
func readDeepSpeed(data []byte, lg *Log) {
	d := &dsReader{lg: lg}
	lines(data, d.line)
	d.flush()
}

// dsRun is what the lines of a run on DeepSpeed's engine said.
type dsRun struct {
	line, id       int
	active         bool
	config         map[string]string
	timerLine      int
	timerText      []byte
	avg            float64 // samples/s
	step, rankStep int
	peak           float64 // bytes
}

// dsReader is the state of readDeepSpeed: the run it is in.
type dsReader struct {
	lg   *Log
	cur  dsRun
	runs int
}

// line reads line n of the engine's output.
func (d *dsReader) line(n int, l []byte) {
	s := string(l)
	switch {
	case strings.Contains(s, dsConfigHeader):
		d.flush()
		d.runs++
		d.cur = dsRun{line: n, id: d.runs, active: true, config: map[string]string{}}
	case strings.Contains(s, ":print]") && d.cur.active:
		if m := dsConfigLine.FindStringSubmatch(s); m != nil {
			d.cur.config[m[1]] = m[2]
		}
	case strings.Contains(s, "[Rank 0] step="):
		if m := dsStep.FindStringSubmatch(s); m != nil {
			d.cur.rankStep, _ = strconv.Atoi(m[1])
		}
	case strings.Contains(s, "RunningAvgSamplesPerSec="):
		d.timer(n, l, s)
	}
}

// timer reads a line of the ThroughputTimer: the running average, the
// global step and the peak memory.
func (d *dsReader) timer(n int, l []byte, s string) {
	m := dsTimer.FindStringSubmatch(s)
	if m == nil {
		d.lg.malformed(n, l, fmt.Errorf("want %q", "RunningAvgSamplesPerSec=X, CurrSamplesPerSec=Y"))
		return
	}
	if !d.cur.active {
		d.lg.malformed(n, l, fmt.Errorf("no %q before it: batch and world size unknown", dsConfigHeader))
		return
	}
	avg, err := positive(m, 2)
	if err != nil {
		d.lg.malformed(n, l, fmt.Errorf("RunningAvgSamplesPerSec: %w", err))
		return
	}
	step := d.cur.rankStep
	if m[1] != "" {
		if step, err = strconv.Atoi(m[1]); err != nil || step > maxCount {
			d.lg.malformed(n, l, fmt.Errorf("global_step %s: want a whole number", quote(m[1])))
			return
		}
	}
	if mm := dsMaxMemory.FindStringSubmatch(s); mm != nil {
		if gb, err := strconv.ParseFloat(mm[1], 64); err == nil && gb < 1e6 {
			d.cur.peak = max(d.cur.peak, gb*(1<<30))
		}
	}
	d.cur.timerLine, d.cur.timerText, d.cur.avg, d.cur.step = n, l, avg, step
}

// count returns the count of the configuration's entry name.
func (r *dsRun) count(name string) (int, error) {
	v, ok := r.config[name]
	if !ok {
		return 0, fmt.Errorf("no %s in DeepSpeed's configuration before it", name)
	}
	return parseCount(name, v)
}

// precision returns the run's precision: bf16 or fp16 as the
// configuration enables them, else fp32.
func (r *dsRun) precision() string {
	prec := "fp32"
	switch {
	case r.config["bfloat16_enabled"] == "True":
		prec = "bf16"
	case r.config["bfloat16_config"] != "":
		if m := dsBF16.FindStringSubmatch(r.config["bfloat16_config"]); m != nil && m[1] == "True" {
			prec = "bf16"
		}
	}
	if prec == "fp32" && r.config["fp16_enabled"] == "True" {
		prec = "fp16"
	}
	return prec
}

// flush turns the run's last timer line, if any, into its measurement
// record.
func (d *dsReader) flush() {
	defer func() { d.cur = dsRun{} }()
	cur := &d.cur
	if !cur.active || cur.timerLine == 0 {
		return
	}
	var bad []error
	batch, err := cur.count("train_batch_size")
	bad = append(bad, err)
	world, err := cur.count("world_size")
	bad = append(bad, err)
	if err := oneLine(bad); err != nil {
		d.lg.malformed(cur.timerLine, cur.timerText, err)
		return
	}
	// Optional: a record without them is still a throughput.
	micro, _ := cur.count("train_micro_batch_size_per_gpu")
	accumulate, _ := cur.count("gradient_accumulation_steps")
	steps := cur.step - DeepSpeedStartStep
	if steps < 1 {
		d.lg.notef("line %d: run %d: its running average covers no step past the first %d (global step %d)", cur.timerLine, cur.id, DeepSpeedStartStep, cur.step)
		return
	}
	d.lg.addValid(benchlog.Record{
		Kind: benchlog.KindMeasurement, Run: strconv.Itoa(cur.id), Device: "GPU", Precision: cur.precision(),
		Workers: world, Batch: micro, GlobalBatch: batch, Accumulate: accumulate,
		Steps: steps, StepTime: float64(batch) / cur.avg, SamplesPerSec: cur.avg, PeakMemory: cur.peak,
	}, cur.timerLine, cur.timerText)
}
