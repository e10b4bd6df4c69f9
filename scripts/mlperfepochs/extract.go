package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
)

// event is one MLPerf logging event: its key, value and metadata.
type event struct {
	Key      string
	Value    json.RawMessage
	Metadata map[string]json.RawMessage
}

// decodeLine reads the two MLPerf Training log formats (mlcommons/logging,
// mlperf_logging/mllog; and v0.6's mlperf_compliance/mlperf_log.py):
//
//	:::MLLOG {"namespace": "", "time_ms": 1652559774994, "key": "run_stop", "value": null, "metadata": {...}}
//	:::MLL 1560722749.842 run_stop: {"value": null, "metadata": {"status": "success"}}
//
// ok is false for any other line, and for a line of either marker whose
// JSON does not parse (the results' logs interleave other output, and a
// torn line is skipped rather than trusted).
func decodeLine(l []byte) (event, bool) {
	if i := bytes.Index(l, []byte(":::MLLOG")); i >= 0 {
		var e struct {
			Key      string                     `json:"key"`
			Value    json.RawMessage            `json:"value"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal(bytes.TrimSpace(l[i+len(":::MLLOG"):]), &e) != nil || e.Key == "" {
			return event{}, false
		}
		return event(e), true
	}
	i := bytes.Index(l, []byte(":::MLL "))
	if i < 0 {
		return event{}, false
	}
	f := strings.Fields(string(l[i+len(":::MLL "):]))
	if len(f) < 3 || !strings.HasSuffix(f[1], ":") {
		return event{}, false
	}
	var body struct {
		Value    json.RawMessage            `json:"value"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	rest := string(l[i+len(":::MLL "):])
	rest = rest[strings.Index(rest, f[1])+len(f[1]):]
	if json.Unmarshal([]byte(strings.TrimSpace(rest)), &body) != nil {
		return event{}, false
	}
	return event{Key: strings.TrimSuffix(f[1], ":"), Value: body.Value, Metadata: body.Metadata}, true
}

// number is a JSON number, or a string holding one.
func number(r json.RawMessage) (float64, bool) {
	var v float64
	if json.Unmarshal(r, &v) == nil {
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return 0, false
}

// text is a JSON string, "" otherwise.
func text(r json.RawMessage) string {
	var s string
	if json.Unmarshal(r, &s) != nil {
		return ""
	}
	return s
}

// runLog is what one result_N.txt says of its run.
type runLog struct {
	GlobalBatch float64 // global_batch_size; 0 if not logged
	Optimizer   string  // opt_name, lower case; "" if not logged
	LARS        bool    // a lars_* hyperparameter was logged (v0.6 logs without opt_name)
	Status      string  // run_stop's status: "success", "aborted"; "" without run_stop
	// ToTarget is the epoch_num of the last eval_accuracy before run_stop
	// (for BERT a count of training samples); 0 without an evaluation.
	ToTarget float64
	// TrainSamples is the last train_samples logged; 0 if none.
	TrainSamples float64
	// Division is submission_division, "closed" or "open"; "" if not
	// logged (v0.6).
	Division string
}

// readRun reads the events of one MLPerf result log. A log holding
// several runs (none in the results repositories) is read up to its first
// run_stop.
func readRun(r io.Reader) (runLog, error) {
	var run runLog
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		e, ok := decodeLine(sc.Bytes())
		if !ok {
			continue
		}
		switch {
		case e.Key == "global_batch_size":
			if v, ok := number(e.Value); ok && v >= 1 {
				run.GlobalBatch = v
			}
		case e.Key == "submission_division":
			run.Division = division(text(e.Value))
		case e.Key == "opt_name":
			run.Optimizer = strings.ToLower(strings.TrimSpace(text(e.Value)))
		case strings.HasPrefix(e.Key, "lars_"):
			run.LARS = true
		case e.Key == "eval_accuracy":
			if v, ok := number(e.Metadata["epoch_num"]); ok && v > 0 {
				run.ToTarget = v
			}
		case e.Key == "train_samples":
			if v, ok := number(e.Value); ok && v > 0 {
				run.TrainSamples = v
			}
		case e.Key == "run_stop":
			run.Status = strings.ToLower(text(e.Metadata["status"]))
			return run, nil
		}
	}
	return run, sc.Err()
}

// benchmark is one MLPerf Training benchmark whose epochs to target this
// program extracts.
type benchmark struct {
	Name string // output name: the CSV's base name
	// Dir is the directory name of its results; Rounds limits it to the
	// rounds whose "ssd" directory held this benchmark.
	Dir    []string
	Rounds func(round string) bool
	// Unit is what ToTarget counts: "epochs", or "samples" (BERT has no
	// epochs: its logs' epoch_num counts training samples).
	Unit string
	// Optimizer is the benchmark's optimizer where a log names none: the
	// reference implementation's (mlcommons/training, the benchmark's
	// README and optimizer).
	Optimizer string
}

// before20 reports whether round, "v0.6", is earlier than v2.0, when
// MLPerf replaced SSD (ResNet-34, COCO) with RetinaNet (OpenImages) under
// the same "ssd" directory (MLPerf Training v2.0 release notes; the
// mlcommons/training repository's single_stage_detector README).
func before20(round string) bool {
	v, err := strconv.ParseFloat(strings.TrimPrefix(round, "v"), 64)
	return err == nil && v < 2.0
}

// benchmarks are those the program extracts.
var benchmarks = []benchmark{
	{Name: "resnet", Dir: []string{"resnet"}, Unit: "epochs", Optimizer: "sgd"},
	{Name: "bert", Dir: []string{"bert"}, Unit: "samples", Optimizer: "lamb"},
	{Name: "ssd", Dir: []string{"ssd"}, Rounds: before20, Unit: "epochs", Optimizer: "sgd"},
	{Name: "retinanet", Dir: []string{"ssd"}, Rounds: func(r string) bool { return !before20(r) }, Unit: "epochs", Optimizer: "adam"},
	{Name: "maskrcnn", Dir: []string{"maskrcnn", "mask"}, Unit: "epochs", Optimizer: "sgd"},
}

// optimizerOf is the optimizer a run used: the logged opt_name, LARS where
// a lars_* key was logged, else the benchmark's.
func optimizerOf(r runLog, b benchmark) string {
	switch {
	case r.Optimizer != "":
		return strings.ReplaceAll(r.Optimizer, " ", "_")
	case r.LARS:
		return "lars"
	}
	return b.Optimizer
}

// toTarget is a run's epochs (or samples) to target: the last evaluation's
// epoch_num; for BERT the last train_samples, which NVIDIA's and most
// others' logs print at the end as the samples trained, or else an
// epoch_num of at least minSampleSteps global batches. BERT's epoch_num
// means different things across submitters and rounds (1 for the one
// "epoch" of NVIDIA's v1.x logs, a step count in Google's v0.7 logs, the
// samples trained from v2.0 on), so a smaller one is not read as samples.
func toTarget(r runLog, b benchmark) float64 {
	if b.Unit != "samples" {
		return r.ToTarget
	}
	if r.TrainSamples > 0 {
		return r.TrainSamples
	}
	if r.ToTarget >= minSampleSteps*r.GlobalBatch {
		return r.ToTarget
	}
	return 0
}

// minSampleSteps is the fewest steps a BERT run takes to the target: the
// fewest seen in the results are about 400 steps at batch 8,192 (NVIDIA
// v4.1, 3.3 M samples); a hundred leaves a wide margin below it and far
// above a step count read as samples.
const minSampleSteps = 100

// division normalises a division's name: "Closed" and "close" are
// "closed", "Open" is "open"; anything else is "".
func division(s string) string {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "closed", "close":
		return "closed"
	case "open":
		return "open"
	}
	return ""
}
