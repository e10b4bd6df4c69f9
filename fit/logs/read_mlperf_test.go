package logs

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/benchlog"
)

// mlEvent is one MLPerf log event, to be written in either format.
type mlEvent struct {
	ms    int64 // time since the epoch, milliseconds
	key   string
	value any
	meta  map[string]any
}

// mlRunEvents returns the events of one run of bench at global batch gb:
// an epoch per entry of epochMS (its duration), an eval_accuracy of acc
// after the last, and run_stop with status. trainSamples 0 leaves the
// train_samples key out, as v0.6 logs do.
func mlRunEvents(bench string, gb, trainSamples int, epochMS []int64, acc float64, status string) []mlEvent {
	t := int64(1560000000000)
	next := func(d int64) int64 { t += d; return t }
	evs := []mlEvent{
		{next(1), "submission_benchmark", bench, nil},
		{next(1), "submission_org", "ExampleOrg", nil},
		{next(1), "submission_platform", "1xExampleNode", nil},
		{next(1), "global_batch_size", gb, nil},
	}
	if trainSamples > 0 {
		evs = append(evs, mlEvent{next(1), "train_samples", trainSamples, nil})
	}
	evs = append(evs, mlEvent{next(1000), "run_start", nil, nil})
	for i, d := range epochMS {
		evs = append(evs,
			mlEvent{next(1), "epoch_start", nil, map[string]any{"epoch_num": i + 1}},
			mlEvent{next(d), "epoch_stop", nil, map[string]any{"epoch_num": i + 1}})
	}
	return append(evs,
		mlEvent{next(2000), "eval_accuracy", acc, map[string]any{"epoch_num": len(epochMS)}},
		mlEvent{next(1), "run_stop", nil, map[string]any{"status": status}})
}

// mlLog writes events as a v0.7 (":::MLLOG") or v0.6 (":::MLL") log.
func mlLog(t *testing.T, evs []mlEvent, v06 bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Beginning trial 1 of 1\n")
	for _, e := range evs {
		meta := map[string]any{"file": "train.py", "lineno": 42}
		for k, v := range e.meta {
			meta[k] = v
		}
		v, err := json.Marshal(e.value)
		if err != nil {
			t.Fatal(err)
		}
		m, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		if v06 {
			fmt.Fprintf(&b, ":::MLL %d.%03d %s: {\"value\": %s, \"metadata\": %s}\n", e.ms/1000, e.ms%1000, e.key, v, m)
		} else {
			fmt.Fprintf(&b, ":::MLLOG {\"namespace\": \"\", \"time_ms\": %d, \"event_type\": \"POINT_IN_TIME\", \"key\": %q, \"value\": %s, \"metadata\": %s}\n", e.ms, e.key, v, m)
		}
	}
	return b.String()
}

// TestReadMLPerfV06Figures checks the v0.6 sample log against figures
// computed by hand from its lines.
func TestReadMLPerfV06Figures(t *testing.T) {
	lg, err := ReadFile("../testdata/mlperf06_resnet.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(lg.Runs))
	}
	r := lg.Runs[0]
	// run_start 1561012831.003, run_stop 1561013302.023.
	if got, want := float64(r.TimeToTrain), 471.020; math.Abs(got-want) > 1e-9 {
		t.Errorf("time to train %v s, want %v", got, want)
	}
	if r.Model != "resnet50" || r.Benchmark != "resnet" || r.Epochs != 4 || r.GlobalBatch != 1664 || r.Status != "success" || r.Accuracy != 0.7601 {
		t.Errorf("run %+v: want resnet50 (benchmark resnet), 4 epochs at global batch 1664, success, accuracy 0.7601", r)
	}
	// Epoch 1: epoch_start 1561012833.902, epoch_stop 1561012950.782, and
	// no train_samples line: ImageNet's 1281167 images.
	m := lg.Records[0]
	if want := 1281167 / 116.880; m.Kind != benchlog.KindMeasurement || math.Abs(m.SamplesPerSec/want-1) > 1e-12 {
		t.Errorf("epoch 1: %s %v samples/s, want measurement %v", m.Kind, m.SamplesPerSec, want)
	}
	if m.Model != "resnet50" || m.Labels["benchmark"] != "resnet" || m.Labels["org"] != "ExampleOrg" {
		t.Errorf("epoch 1: model %q, labels %v: want resnet50 with benchmark=resnet, org=ExampleOrg", m.Model, m.Labels)
	}
	// 4 epochs of 1281167 samples at 1664 a step: 3079.7 steps.
	c := lg.Records[len(lg.Records)-1]
	if c.Kind != benchlog.KindConvergence || c.StepsToTarget != 3080 || !c.Reached || c.Accuracy != 0.7601 {
		t.Errorf("convergence %+v: want 3080 steps, reached at 0.7601", c)
	}
	if len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "1281167 assumed") {
		t.Errorf("notes %q: want one saying 1281167 samples per epoch were assumed", lg.Notes)
	}
}

// TestMLPerfV06SameAsV07: the same events written as a v0.6 and as a v0.7
// log read as the same records, runs and notes, for every benchmark whose
// name the reader maps to the catalogue's.
func TestMLPerfV06SameAsV07(t *testing.T) {
	for _, tc := range []struct {
		bench, model string
		samples      int // train_samples logged; 0 for none
		perEpoch     int // samples per epoch the records must use
	}{
		{"resnet", "resnet50", 0, 1281167},
		{"ssd", "ssd-resnet34", 0, 117266},
		{"maskrcnn", "maskrcnn-r50-fpn", 0, 117266},
		{"transformer", "transformer-big", 4000000, 4000000},
		{"gnmt", "gnmt", 3500000, 3500000},
		{"minigo", "minigo", 1000, 1000},
	} {
		t.Run(tc.bench, func(t *testing.T) {
			evs := mlRunEvents(tc.bench, 1024, tc.samples, []int64{100500, 98250, 99125}, 0.801, "success")
			var got [2]*Log
			for i, v06 := range []bool{false, true} {
				lg, err := Read(strings.NewReader(mlLog(t, evs, v06)), "run.log")
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]Format{false: MLPerf, true: MLPerfV06}[v06]; lg.Format != want {
					t.Errorf("read as %s, want %s", lg.Format, want)
				}
				got[i] = lg
			}
			v07, v06 := got[0], got[1]
			if !reflect.DeepEqual(v06.Records, v07.Records) || !reflect.DeepEqual(v06.Lines, v07.Lines) {
				t.Errorf("records differ:\nv0.6 %+v\nv0.7 %+v", v06.Records, v07.Records)
			}
			if !reflect.DeepEqual(v06.Runs, v07.Runs) || !reflect.DeepEqual(v06.Notes, v07.Notes) || v06.Malformed+v07.Malformed != 0 {
				t.Errorf("runs, notes or malformed differ:\nv0.6 %+v %q %d\nv0.7 %+v %q %d",
					v06.Runs, v06.Notes, v06.Malformed, v07.Runs, v07.Notes, v07.Malformed)
			}
			if len(v06.Records) != 4 {
				t.Fatalf("%d records, want 3 epochs and a convergence record", len(v06.Records))
			}
			for _, r := range v06.Records {
				if r.Model != tc.model || r.Labels["benchmark"] != tc.bench {
					t.Errorf("%s record: model %q, benchmark label %q; want %q, %q", r.Kind, r.Model, r.Labels["benchmark"], tc.model, tc.bench)
				}
			}
			if want := float64(tc.perEpoch) / 100.5; math.Abs(v06.Records[0].SamplesPerSec/want-1) > 1e-12 {
				t.Errorf("epoch 1: %v samples/s, want %v", v06.Records[0].SamplesPerSec, want)
			}
			// run_start at +1 s after the settings, then 1 ms + epoch per
			// epoch, 2 s to the evaluation and 1 ms to run_stop.
			if want := (100500 + 98250 + 99125 + 3 + 2000 + 1) / 1000.0; math.Abs(float64(v06.Runs[0].TimeToTrain)-want) > 1e-9 {
				t.Errorf("time to train %v, want %v s", v06.Runs[0].TimeToTrain, want)
			}
			if r := v06.Runs[0]; r.Model != tc.model || r.Benchmark != tc.bench {
				t.Errorf("run: model %q, benchmark %q; want %q, %q", r.Model, r.Benchmark, tc.model, tc.bench)
			}
		})
	}
}

// TestMLPerfCatalogueNames: the names the reader gives MLPerf's benchmarks
// are models of the catalogue, MLPerf's recipes train them, and the
// epochs it assumes are the catalogue's training sets.
func TestMLPerfCatalogueNames(t *testing.T) {
	type model struct {
		Dataset string `yaml:"dataset"`
	}
	var (
		models   = map[string]model{}
		datasets = map[string]struct {
			TrainSamples int `yaml:"train_samples"`
		}{}
		recipes = map[string]struct {
			Model string `yaml:"model"`
		}{}
	)
	files, err := filepath.Glob("../../model/profiles/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("catalogue files: %v, %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Models   map[string]model `yaml:"models"`
			Datasets map[string]struct {
				TrainSamples int `yaml:"train_samples"`
			} `yaml:"datasets"`
			Recipes map[string]struct {
				Model string `yaml:"model"`
			} `yaml:"recipes"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k, v := range doc.Models {
			models[k] = v
		}
		for k, v := range doc.Datasets {
			datasets[k] = v
		}
		for k, v := range doc.Recipes {
			recipes[k] = v
		}
	}
	// MLPerf's recipe of each benchmark (Transformer: the big one).
	for bench, recipe := range map[string]string{
		"resnet": "mlperf-v0.7-resnet50", "ssd": "mlperf-v0.7-ssd", "maskrcnn": "mlperf-v0.7-maskrcnn",
		"transformer": "mlperf-v0.7-transformer", "gnmt": "mlperf-v0.7-gnmt",
	} {
		name := catalogueModel(bench)
		m, ok := models[name]
		if !ok {
			t.Errorf("%s: %q is not a model of model/profiles", bench, name)
			continue
		}
		if r := recipes[recipe]; r.Model != name {
			t.Errorf("%s: recipe %s trains %q; the reader names the benchmark %q", bench, recipe, r.Model, name)
		}
		if n, _ := mlperfTrainSamples(bench); n != 0 && n != datasets[m.Dataset].TrainSamples {
			t.Errorf("%s: %d samples per epoch assumed; the catalogue's %s has %d", bench, n, m.Dataset, datasets[m.Dataset].TrainSamples)
		}
	}
	if got := catalogueModel("bert"); got != "bert" {
		t.Errorf("catalogueModel(bert) = %q: a benchmark the catalogue lacks keeps its name", got)
	}
}

// TestDecodeMLL checks the v0.6 line decoder on the forms it must accept
// and refuse.
func TestDecodeMLL(t *testing.T) {
	for _, tc := range []struct {
		line  string
		ok    bool // the line has the marker
		key   string
		ms    float64
		value string
		err   string // substring of the error; "" for none
	}{
		{`:::MLL 1558640449.212 run_start: {"value": null, "metadata": {"file": "train.py", "lineno": 42}}`, true, "run_start", 1558640449212, "null", ""},
		{`0: :::MLL 1558640449.2 global_batch_size: {"metadata": {}, "value": 960}`, true, "global_batch_size", 1558640449200, "960", ""},
		{`:::MLL 1558640449 eval_accuracy: {"value": 0.23}`, true, "eval_accuracy", 1558640449000, "0.23", ""},
		// 1092502555.600·1000 and 8917690009.446·1e6 are not whole in
		// floating point; the reader's milliseconds are.
		{`:::MLL 1092502555.600 epoch_stop: {"value": null}`, true, "epoch_stop", 1092502555600, "null", ""},
		{`:::MLL 8917690009.446 epoch_stop: {"value": null}`, true, "epoch_stop", 8917690009446, "null", ""},
		{`:::MLL 1556733699.71 run_start: {"value": null}`, true, "run_start", 1556733699710, "null", ""},
		{`:::MLL 1560722603.602738491 run_start: {"value": null}`, true, "run_start", 1560722603602.738491, "null", ""},
		{`:::MLL 1560722603. run_start: {"value": null}`, true, "run_start", 1560722603000, "null", ""},
		{`:::MLLOG {"namespace": "", "time_ms": 1, "key": "run_start"}`, false, "", 0, "", ""},
		{`Epoch[0] Batch [0-20]	Speed: 10412.07 samples/sec`, false, "", 0, "", ""},
		{`:::MLL run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL -1.5 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL 1e9 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL .5 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL 99999999999999999999 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL 1.0000000001 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL 1.2.3 run_start: {"value": null}`, true, "", 0, "", "want seconds since the epoch"},
		{`:::MLL 1558640449.212`, true, "", 0, "", `want ":::MLL SECONDS KEY:`},
		{`:::MLL 1558640449.212 run_start {"value": null}`, true, "", 0, "", `want ":::MLL SECONDS KEY:`},
		{`:::MLL 1558640449.212 : {"value": null}`, true, "", 0, "", `want ":::MLL SECONDS KEY:`},
		{`:::MLL 1558640449.212 run_start: {"value": null, "metad`, true, "", 0, "", "unexpected end of JSON input"},
	} {
		e, ok, err := decodeMLL([]byte(tc.line))
		switch {
		case ok != tc.ok:
			t.Errorf("%s: ok %v, want %v", tc.line, ok, tc.ok)
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.line, err, tc.err)
			}
		case !ok:
		case err != nil:
			t.Errorf("%s: %v", tc.line, err)
		case *e.Key != tc.key || *e.TimeMS != tc.ms || string(e.Value) != tc.value:
			t.Errorf("%s: key %q, time %v ms, value %s; want %q, %v, %s", tc.line, *e.Key, *e.TimeMS, e.Value, tc.key, tc.ms, tc.value)
		}
	}
}

func TestReadMLPerfV06Errors(t *testing.T) {
	in := `:::MLL 1558570829.749 global_batch_size: {"value": 960, "metadata": {"file": "train.py", "lineno": 481}}` + "\n" +
		`:::MLL 1558570829.750 epoch_stop {"value": null}` + "\n"
	_, err := Read(strings.NewReader(in), "v06.log")
	if !errors.Is(err, ErrNoRecords) {
		t.Fatalf("error %v, want ErrNoRecords", err)
	}
	for _, want := range []string{"v06.log: ", "MLPerf Training v0.6 log (:::MLL lines)", `want ":::MLL SECONDS KEY: {...}" lines`, "1 malformed line: line 2: "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q: want it to contain %q", err, want)
		}
	}
}

// TestMLPerfAccuracyScale: an eval_accuracy above 1 is a percentage for
// the vision benchmarks and BLEU for the translation ones; both are kept
// as a fraction (value/100), and the note says which it was.
func TestMLPerfAccuracyScale(t *testing.T) {
	for _, tc := range []struct {
		bench string
		acc   float64
		want  float64
		note  string
	}{
		{"resnet", 75.93, 0.7593, "eval_accuracy 75.93 read as percent"},
		{"transformer", 25.31, 0.2531, "eval_accuracy 25.31 is BLEU, recorded as BLEU/100"},
		{"gnmt", 24.02, 0.2402, "eval_accuracy 24.02 is BLEU, recorded as BLEU/100"},
		{"resnet", 0.7593, 0.7593, ""},
	} {
		evs := mlRunEvents(tc.bench, 1024, 1000000, []int64{100000}, tc.acc, "success")
		lg, err := Read(strings.NewReader(mlLog(t, evs, false)), "run.log")
		if err != nil {
			t.Fatal(err)
		}
		conv := lg.Records[len(lg.Records)-1]
		if conv.Kind != benchlog.KindConvergence || conv.Accuracy != tc.want {
			t.Errorf("%s %v: record %+v, want accuracy %v", tc.bench, tc.acc, conv, tc.want)
		}
		noted := false
		for _, n := range lg.Notes {
			noted = noted || (tc.note != "" && strings.Contains(n, tc.note))
			if tc.note == "" && strings.Contains(n, "eval_accuracy") {
				t.Errorf("%s %v: note %q, want none about eval_accuracy", tc.bench, tc.acc, n)
			}
		}
		if tc.note != "" && !noted {
			t.Errorf("%s %v: notes %q, want one saying %q", tc.bench, tc.acc, lg.Notes, tc.note)
		}
	}
}

// TestMLPerfBadSizesAndIntervals: a global_batch_size or train_samples
// that is not a whole number of at least one, and an epoch or block that
// stops at or before its start, are malformed lines, in both formats; the
// epochs that are whole still give their samples/s. (The run starts at
// 1,560,000,001,005 ms; epoch 1 runs from ...1,006 to ...2,006 and epoch 2
// from ...2,007 to ...3,007, as mlRunEvents lays them out.)
func TestMLPerfBadSizesAndIntervals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func([]mlEvent) []mlEvent
		want     string // the one malformed line's error
		measured int    // epochs that give samples/s
	}{
		{"batch of zero", func(e []mlEvent) []mlEvent { e[3].value = 0; return e }, "global_batch_size: value 0: want a whole number from 1 to 2^31", 0},
		{"batch of a half", func(e []mlEvent) []mlEvent { e[3].value = 256.5; return e }, "global_batch_size: value 256.5: want a whole number from 1 to 2^31", 0},
		{"no samples", func(e []mlEvent) []mlEvent { e[4].value = 0; return e }, "train_samples: value 0: want a whole number >= 1", 2}, // resnet's set is assumed
		{"epoch backwards", func(e []mlEvent) []mlEvent { e[7].ms = e[6].ms - 5; return e }, "epoch 1 stops at 1560000001001 ms, not after its epoch_start at 1560000001006 ms", 1},
		{"epoch of no time", func(e []mlEvent) []mlEvent { e[9].ms = e[8].ms; return e }, "epoch 2 stops at 1560000002007 ms, not after its epoch_start at 1560000002007 ms", 1},
	} {
		for _, v06 := range []bool{false, true} {
			evs := tc.edit(mlRunEvents("resnet", 256, 1281167, []int64{1000, 1000}, 0.76, "success"))
			lg, err := Read(strings.NewReader(mlLog(t, evs, v06)), "run.log")
			if err != nil {
				t.Fatalf("%s (v0.6 %v): %v", tc.name, v06, err)
			}
			if len(lg.Errors) != 1 || lg.Errors[0].Err.Error() != tc.want {
				t.Errorf("%s (v0.6 %v): errors %v; want one, %q", tc.name, v06, lg.Errors, tc.want)
			}
			var measured int
			for _, r := range lg.Records {
				if r.Kind == benchlog.KindMeasurement {
					measured++
				}
			}
			if measured != tc.measured {
				t.Errorf("%s (v0.6 %v): %d epochs measured; want %d", tc.name, v06, measured, tc.measured)
			}
		}
	}
}

// TestMLPerfDeviceBatch reads the keys and stamps of NVIDIA's MLPerf
// Training v3.0 ResNet-50 log on eight DGX H100 nodes
// (mlcommons/training_results_v3.0, NVIDIA/results/dgxh100_n8_ngc23.04_mxnet/
// resnet/result_0.txt; its last three epochs): d_batch_size 50 of a global
// batch of 3,200 gives 64 workers at 50 each, and epoch 35 took 4.345 s. A
// d_batch_size that does not divide the global batch leaves the count
// unknown, with a note; one of zero is a malformed line. A logged
// gradient_accumulation_steps divides the count.
func TestMLPerfDeviceBatch(t *testing.T) {
	events := func(db any) []mlEvent {
		evs := []mlEvent{
			{1682635170000, "submission_benchmark", "resnet", nil},
			{1682635170001, "submission_platform", "8xNVIDIA DGX H100", nil},
			{1682635178000, "d_batch_size", db, nil},
			{1682635178000, "global_batch_size", 3200, nil},
			{1682635179301, "run_start", nil, nil},
			{1682635179301, "train_samples", 1281167, nil},
		}
		for _, ep := range []struct {
			num         int
			start, stop int64
		}{{33, 1682635326089, 1682635330443}, {34, 1682635330444, 1682635334797}, {35, 1682635334797, 1682635339142}} {
			evs = append(evs,
				mlEvent{ep.start, "epoch_start", nil, map[string]any{"epoch_num": ep.num}},
				mlEvent{ep.stop, "epoch_stop", nil, map[string]any{"epoch_num": ep.num}})
		}
		return append(evs,
			mlEvent{1682635339218, "eval_accuracy", 0.7592, map[string]any{"epoch_num": 35}},
			mlEvent{1682635339218, "run_stop", nil, map[string]any{"status": "success"}})
	}
	read := func(db any) *Log {
		t.Helper()
		lg, err := Read(strings.NewReader(mlLog(t, events(db), false)), "result_0.txt")
		if err != nil {
			t.Fatal(err)
		}
		return lg
	}

	lg := read(50)
	if len(lg.Errors) != 0 {
		t.Errorf("errors %v", lg.Errors)
	}
	var ms []benchlog.Record
	for _, r := range lg.Records {
		if r.Workers != 64 || r.Batch != 50 || r.GlobalBatch != 3200 || r.Device != "8xNVIDIA DGX H100" {
			t.Errorf("record %+v: want 64 workers at 50 of 3,200 on 8xNVIDIA DGX H100", r)
		}
		if r.Kind == benchlog.KindMeasurement {
			ms = append(ms, r)
		}
	}
	if len(ms) != 3 {
		t.Fatalf("%d measurements, want 3", len(ms))
	}
	if want := 1281167 / 4.345; math.Abs(ms[2].SamplesPerSec-want) > 1e-9*want {
		t.Errorf("epoch 35: %v samples/s, want 1,281,167 / 4.345 s = %v", ms[2].SamplesPerSec, want)
	}

	lg = read(48)
	if len(lg.Errors) != 0 || !strings.Contains(strings.Join(lg.Notes, "\n"), "run 1: d_batch_size 48 does not divide global_batch_size 3200: device count unknown") {
		t.Errorf("d_batch_size 48: errors %v, notes %q", lg.Errors, lg.Notes)
	}
	for _, r := range lg.Records {
		if r.Workers != 0 || r.Batch != 0 {
			t.Errorf("d_batch_size 48: record %+v has workers %d, batch %d; want 0", r, r.Workers, r.Batch)
		}
	}

	lg = read(0)
	if len(lg.Errors) != 1 || lg.Errors[0].Err.Error() != "d_batch_size: value 0: want a whole number from 1 to 2^31" {
		t.Errorf("d_batch_size 0: errors %v", lg.Errors)
	}

	// With gradient_accumulation_steps 2, 50 a micro-batch of 3,200 is 32
	// workers; with 3, no whole count.
	for _, tc := range []struct {
		acc, workers, accumulate int
		note                     string
	}{{2, 32, 2, ""}, {1, 64, 0, ""}, {3, 0, 0, "run 1: d_batch_size 50 times gradient_accumulation_steps 3 does not divide global_batch_size 3200: device count unknown"}} {
		evs := append(events(50)[:4:4], mlEvent{1682635178000, "gradient_accumulation_steps", tc.acc, nil})
		evs = append(evs, events(50)[4:]...)
		lg, err := Read(strings.NewReader(mlLog(t, evs, false)), "result_0.txt")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range lg.Records {
			if r.Workers != tc.workers || r.Accumulate != tc.accumulate {
				t.Errorf("accumulation %d: record has %d workers accumulating %d, want %d and %d", tc.acc, r.Workers, r.Accumulate, tc.workers, tc.accumulate)
			}
		}
		if notes := strings.Join(lg.Notes, "\n"); tc.note != "" && !strings.Contains(notes, tc.note) {
			t.Errorf("accumulation %d: notes %q", tc.acc, notes)
		}
	}
}

// TestMLPerfQueuedEpochs reads the stamps of two NVIDIA logs of MLPerf
// Training v2.0 ResNet-50 on DGX A100 nodes (mlcommons/training_results_v2.0,
// NVIDIA/results/dgxa100_n{527,128}_ngc22.04_mxnet/resnet/result_0.txt):
// the 527 nodes' last two blocks, whose epochs (sgdwfastlarsv2) are stamped
// in a burst as they are queued and sum to a fifth of their blocks'
// training, and the 128 nodes' last block, whose epochs are real. The first
// gives a record per block, block_start to eval_start (789 and 776 ms for
// four epochs of 1,281,167 images), with a note; the second its four
// epochs (epoch 56: 530 ms).
func TestMLPerfQueuedEpochs(t *testing.T) {
	header := func(gb int) []mlEvent {
		return []mlEvent{
			{1652509300000, "submission_benchmark", "resnet", nil},
			{1652509300001, "global_batch_size", gb, nil},
			{1652509300002, "train_samples", 1281167, nil},
			{1652509300003, "run_start", nil, nil},
		}
	}
	epoch := func(n int, start, stop int64) []mlEvent {
		return []mlEvent{{start, "epoch_start", nil, map[string]any{"epoch_num": n}}, {stop, "epoch_stop", nil, map[string]any{"epoch_num": n}}}
	}
	block := func(first int, start, evalStart, evalStop int64, epochs ...[]mlEvent) []mlEvent {
		evs := []mlEvent{{start, "block_start", nil, map[string]any{"first_epoch_num": first, "epoch_count": 4}}}
		for _, e := range epochs {
			evs = append(evs, e...)
		}
		return append(evs,
			mlEvent{evalStart, "eval_start", nil, map[string]any{"epoch_num": first + 3}},
			mlEvent{evalStop, "eval_stop", nil, map[string]any{"epoch_num": first + 3}},
			mlEvent{evalStop, "block_stop", nil, map[string]any{"first_epoch_num": first}})
	}
	measured := func(lg *Log) []benchlog.Record {
		var rs []benchlog.Record
		for _, r := range lg.Records {
			if r.Kind == benchlog.KindMeasurement {
				rs = append(rs, r)
			}
		}
		return rs
	}
	const samples = 1281167.0

	evs := header(67456)
	evs = append(evs, block(79, 1652509481115, 1652509481904, 1652509481926,
		epoch(79, 1652509481116, 1652509481160), epoch(80, 1652509481160, 1652509481188),
		epoch(81, 1652509481188, 1652509481238), epoch(82, 1652509481239, 1652509481267))...)
	evs = append(evs, block(83, 1652509481926, 1652509482702, 1652509482746,
		epoch(83, 1652509481926, 1652509481955), epoch(84, 1652509481955, 1652509481986),
		epoch(85, 1652509481987, 1652509482026), epoch(86, 1652509482027, 1652509482094))...)
	evs = append(evs, mlEvent{1652509482746, "run_stop", nil, map[string]any{"status": "success"}})
	for _, v06 := range []bool{false, true} {
		lg, err := Read(strings.NewReader(mlLog(t, evs, v06)), "result_0.txt")
		if err != nil {
			t.Fatal(err)
		}
		rs := measured(lg)
		if len(rs) != 2 {
			t.Fatalf("527 nodes (v0.6 %v): %d measurements, want one per block", v06, len(rs))
		}
		for i, ms := range []float64{789, 776} {
			if want := 4 * samples / (ms / 1000); math.Abs(rs[i].SamplesPerSec-want) > 1e-9*want {
				t.Errorf("527 nodes (v0.6 %v), block %d: %v samples/s, want 4 × %v / %v ms = %v", v06, i, rs[i].SamplesPerSec, samples, ms, want)
			}
		}
		// (44+28+50+28 + 29+31+39+67) ms of 789+776: 20 %.
		if len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "sum to 20% of their blocks' training time") {
			t.Errorf("527 nodes (v0.6 %v): notes %q", v06, lg.Notes)
		}
	}

	evs = header(35840)
	evs = append(evs, block(53, 1652629833442, 1652629835595, 1652629835607,
		epoch(53, 1652629833442, 1652629833979), epoch(54, 1652629833980, 1652629834516),
		epoch(55, 1652629834516, 1652629835053), epoch(56, 1652629835053, 1652629835583))...)
	evs = append(evs, mlEvent{1652629835608, "run_stop", nil, map[string]any{"status": "success"}})
	lg, err := Read(strings.NewReader(mlLog(t, evs, false)), "result_0.txt")
	if err != nil {
		t.Fatal(err)
	}
	rs := measured(lg)
	if len(rs) != 4 || len(lg.Notes) != 0 {
		t.Fatalf("128 nodes: %d measurements and notes %q, want the four epochs and none", len(rs), lg.Notes)
	}
	if want := samples / 0.530; math.Abs(rs[3].SamplesPerSec-want) > 1e-9*want {
		t.Errorf("128 nodes, epoch 56: %v samples/s, want %v", rs[3].SamplesPerSec, want)
	}
}

// TestMLPerfGraphcorePlatform reads logs of the shape of Graphcore's MLPerf
// Training v1.1 ResNet-50 logs (mlcommons/training_results_v1.1,
// Graphcore/results/ipu-pod64-TF1/resnet/result_0.txt: submission_platform
// "POD64", global_batch_size 3840, gradient_accumulation_steps 3, no
// d_batch_size; epoch 5 from 1636035684278 to 1636035696149 ms): the
// platform's name gives 64 IPUs, so 3,840 / (64 · 3) = 20 samples each per
// micro-batch, and the epoch 1,281,167 / 11.871 s.
func TestMLPerfGraphcorePlatform(t *testing.T) {
	read := func(platform string, gb, acc int) *Log {
		t.Helper()
		evs := []mlEvent{
			{1636035624000, "submission_benchmark", "resnet", nil},
			{1636035624001, "submission_org", "Graphcore", nil},
			{1636035624002, "submission_platform", platform, nil},
			{1636035624003, "global_batch_size", gb, nil},
			{1636035624004, "gradient_accumulation_steps", acc, nil},
			{1636035624005, "train_samples", 1281167, nil},
			{1636035624006, "run_start", nil, nil},
			{1636035684278, "epoch_start", nil, map[string]any{"epoch_num": 5}},
			{1636035696149, "epoch_stop", nil, map[string]any{"epoch_num": 5}},
			{1636035700000, "eval_accuracy", 0.7594, map[string]any{"epoch_num": 5}},
			{1636035700001, "run_stop", nil, map[string]any{"status": "success"}},
		}
		lg, err := Read(strings.NewReader(mlLog(t, evs, false)), "result_0.txt")
		if err != nil {
			t.Fatal(err)
		}
		if len(lg.Errors) != 0 {
			t.Errorf("%s: errors %v", platform, lg.Errors)
		}
		return lg
	}
	for _, tc := range []struct {
		platform                   string
		gb, acc                    int
		workers, batch, accumulate int
		note                       string
	}{
		{"POD64", 3840, 3, 64, 20, 3, "run 1: 64 devices, from the platform's name POD64 (Graphcore names its systems by their IPU count), 20 samples each per micro-batch"},
		{"IPU-POD16", 3200, 10, 16, 20, 10, "run 1: 16 devices, from the platform's name IPU-POD16"},
		{"Bow-POD256", 10240, 2, 256, 20, 2, "run 1: 256 devices"},
		{"pod128", 5120, 1, 128, 40, 0, "run 1: 128 devices"},
		{"POD64", 3841, 3, 0, 0, 0, "run 1: 64 devices (platform POD64) times gradient_accumulation_steps 3 do not divide global_batch_size 3841: device count unknown"},
		{"POD0", 3840, 3, 0, 0, 0, ""},
		{"POD+64", 3840, 3, 0, 0, 0, ""},
		{"POD64x", 3840, 3, 0, 0, 0, ""},
		{"1xPOD64", 3840, 3, 0, 0, 0, ""},
	} {
		lg := read(tc.platform, tc.gb, tc.acc)
		if len(lg.Records) != 2 {
			t.Fatalf("%s: %d records, want a measurement and a convergence record", tc.platform, len(lg.Records))
		}
		for _, r := range lg.Records {
			if r.Workers != tc.workers || r.Batch != tc.batch || r.Accumulate != tc.accumulate || r.Device != tc.platform {
				t.Errorf("%s, global batch %d: record has %d workers at %d accumulating %d on %q; want %d, %d, %d", tc.platform, tc.gb, r.Workers, r.Batch, r.Accumulate, r.Device, tc.workers, tc.batch, tc.accumulate)
			}
		}
		notes := strings.Join(lg.Notes, "\n")
		if tc.note != "" && !strings.Contains(notes, tc.note) || tc.note == "" && strings.Contains(notes, "devices") {
			t.Errorf("%s: notes %q, want %q", tc.platform, notes, tc.note)
		}
		m := lg.Records[0]
		if want := 1281167 / 11.871; m.Kind != benchlog.KindMeasurement || math.Abs(m.SamplesPerSec-want) > 1e-9*want {
			t.Errorf("%s: %+v, want epoch 5 at 1,281,167 / 11.871 s = %v samples/s", tc.platform, m, want)
		}
	}
}
