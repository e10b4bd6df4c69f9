package logs

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// TestReadLightning reads the two sample metrics.csv files of ../testdata,
// written by hand in the rows Lightning's CSVLogger writes for the
// ThroughputMonitor callback (lightning/pytorch/callbacks/
// throughput_monitor.py, lightning/fabric/utilities/throughput.py); they
// are not the output of a run. lightning_ddp_metrics.csv is one training
// on two devices at 64 samples each: 0.1 s a batch for the first 50, then
// 0.05 s, so from the first full window (batch 100, 7.5 s) to the last row
// (batch 500, 27.5 s) one device ran 400 × 64 samples in 20 s, 1,280
// samples/s, 2,560 on both. lightning_1gpu_metrics.csv is two trainings
// with one logger on one device, at 128 and then 256 samples a batch, 0.09
// and 0.17 s a batch past the first 50: the law b/1600 + 0.01 s.
func TestReadLightning(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []benchlog.Record
	}{
		{"lightning_ddp_metrics.csv", []benchlog.Record{
			{Kind: benchlog.KindMeasurement, Run: "1", Workers: 2, Batch: 64, GlobalBatch: 128, Steps: 400, StepTime: 0.05, SamplesPerSec: 2560},
		}},
		{"lightning_1gpu_metrics.csv", []benchlog.Record{
			{Kind: benchlog.KindMeasurement, Run: "1", Workers: 1, Batch: 128, GlobalBatch: 128, Steps: 300, StepTime: 0.09, SamplesPerSec: 128 / 0.09},
			{Kind: benchlog.KindMeasurement, Run: "2", Workers: 1, Batch: 256, GlobalBatch: 256, Steps: 300, StepTime: 0.17, SamplesPerSec: 256 / 0.17},
		}},
	} {
		lg, err := ReadFile("../testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if lg.Format != Lightning || lg.Malformed != 0 || len(lg.Notes) != 0 {
			t.Fatalf("%s: format %s, %s, notes %q", tc.file, lg.Format, lg.MalformedSummary(), lg.Notes)
		}
		if len(lg.Records) != len(tc.want) {
			t.Fatalf("%s: %d records, want %d", tc.file, len(lg.Records), len(tc.want))
		}
		for i, r := range lg.Records {
			w := tc.want[i]
			if math.Abs(r.StepTime/w.StepTime-1) > 1e-12 || math.Abs(r.SamplesPerSec/w.SamplesPerSec-1) > 1e-12 {
				t.Errorf("%s: record %d: step %v, %v samples/s; want %v, %v", tc.file, i, r.StepTime, r.SamplesPerSec, w.StepTime, w.SamplesPerSec)
			}
			r.StepTime, r.SamplesPerSec = w.StepTime, w.SamplesPerSec
			if r.Kind != w.Kind || r.Run != w.Run || r.Workers != w.Workers || r.Batch != w.Batch || r.GlobalBatch != w.GlobalBatch || r.Steps != w.Steps || r.Device != "" {
				t.Errorf("%s: record %d:\n%+v\nwant\n%+v", tc.file, i, r, w)
			}
		}
	}
}

// TestReadLightningVariants covers the rows a metrics.csv may hold: a run
// whose window never filled, a single row with a samples/s (the window's
// figure), world sizes from the ratio of the two samples/s, batches of
// different sizes, and what is malformed.
func TestReadLightningVariants(t *testing.T) {
	const header = "train/time,train/batches,train/samples,epoch,step,train/device/samples_per_sec,train/samples_per_sec,loss\n"
	read := func(body string) *Log {
		t.Helper()
		lg, err := ReadAs(strings.NewReader(header+body), "m.csv", Lightning)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		return lg
	}
	// One row with a rate: the window's samples/s, four devices (3.98
	// rounds to 4).
	lg := read("5,100,3200,0,99,,,\n6,120,3840,0,119,500,1990,\n")
	if r := lg.Records[0]; r.Workers != 4 || r.Batch != 32 || r.SamplesPerSec != 2000 || r.StepTime != 32.0/500 || r.Steps != 0 {
		t.Errorf("one rate: %+v", r)
	}
	// A second training (the batches fall) whose window never filled.
	lg = read("5,100,3200,0,99,640,,\n10,200,6400,0,199,640,,\n1,10,640,0,9,,,\n")
	if len(lg.Records) != 1 || len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "line 4: run 2: no train/device/samples_per_sec") {
		t.Errorf("window never filled: %d records, notes %q", len(lg.Records), lg.Notes)
	}
	// Batches of different sizes: the mean, rounded, with a note.
	lg = read("5,100,3210,0,99,640,,\n10,200,6410,0,199,640,,\n")
	if r := lg.Records[0]; r.Batch != 32 || len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "batches of different sizes, taken as 32") {
		t.Errorf("uneven batches: %+v, notes %q", r, lg.Notes)
	}
	// Rows of other metrics are skipped; malformed rows are counted.
	lg = read(",,,0,99,,,2.5\n5,100,3200,0,99,640,,\n5,100\nx,200,6400,0,199,640,,\n10,0,6400,0,199,,,\n10,200,6400,0,199,640,,\n")
	if lg.Malformed != 3 || len(lg.Records) != 1 || lg.Records[0].SamplesPerSec != 640 {
		t.Errorf("malformed rows: %s, records %+v", lg.MalformedSummary(), lg.Records)
	}
	// No row of the callback at all: nothing usable.
	if _, err := ReadAs(strings.NewReader(header+",,,0,9,,,2.5\n"), "m.csv", Lightning); !errors.Is(err, ErrNoRecords) {
		t.Errorf("no callback rows: %v", err)
	}
	// Another header read as Lightning.
	if _, err := ReadAs(strings.NewReader("batch,samples_per_s\n8,100\n"), "m.csv", Lightning); !errors.Is(err, ErrNoRecords) || !strings.Contains(err.Error(), "want a header with train/time") {
		t.Errorf("a CSV read as Lightning: %v", err)
	}
}

// TestDetectLightning: a metrics.csv with the callback's columns is
// Lightning's, whatever its other columns; a plain CSV stays CSV.
func TestDetectLightning(t *testing.T) {
	for _, tc := range []struct {
		head string
		want Format
	}{
		{"train/time,train/batches,train/samples,epoch,step\n", Lightning},
		{"# comment\nepoch,step,train/samples,train/batches,train/time,val_acc\n", Lightning},
		{"batch,samples_per_s\n8,100\n", CSV},
	} {
		if f, err := Detect([]byte(tc.head)); err != nil || f != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.head, f, err, tc.want)
		}
	}
}

// TestReadLightningEvals reads ../testdata/lightning_val_metrics.csv, written
// by hand as the last two files are: two trainings on one device with the
// model's validation accuracy logged as val_acc at the end of each epoch
// of 12,800 samples, in the step column at the optimizer steps taken less
// one, as Lightning logs validation (TestFitLightningEvals fits them).
func TestReadLightningEvals(t *testing.T) {
	lg, err := ReadFile("../testdata/lightning_val_metrics.csv")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Lightning || lg.Malformed != 0 || len(lg.Notes) != 0 || len(lg.Records) != 2 {
		t.Fatalf("format %s, %s, notes %q, %d records", lg.Format, lg.MalformedSummary(), lg.Notes, len(lg.Records))
	}
	want := []Run{
		{Line: 2, Run: "1", Device: "1 device", GlobalBatch: 128, Status: StatusUnknown, Accuracy: 0.88, Evals: []Eval{{6, 100, 0.70}, {11, 200, 0.82}, {16, 300, 0.88}}},
		{Line: 17, Run: "2", Device: "1 device", GlobalBatch: 256, Status: StatusUnknown, Accuracy: 0.84, Evals: []Eval{{19, 50, 0.70}, {22, 100, 0.78}, {25, 150, 0.84}}},
	}
	if len(lg.Runs) != len(want) {
		t.Fatalf("%d runs, want %d: %+v", len(lg.Runs), len(want), lg.Runs)
	}
	for i, w := range want {
		r := lg.Runs[i]
		if math.Abs(float64(r.StepTime)-float64(lg.Records[i].StepTime)) > 1e-15 {
			t.Errorf("run %d: step %v, record's %v", i, r.StepTime, lg.Records[i].StepTime)
		}
		r.StepTime = 0
		if !reflect.DeepEqual(r, w) {
			t.Errorf("run %d:\n got %+v\nwant %+v", i, r, w)
		}
	}
}

// TestReadLightningEvalVariants covers the validation accuracy columns: a
// percentage, several candidate columns, and what is malformed.
func TestReadLightningEvalVariants(t *testing.T) {
	read := func(header, body string) *Log {
		t.Helper()
		lg, err := ReadAs(strings.NewReader(header+body), "m.csv", Lightning)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		return lg
	}
	const rows = "5,100,3200,0,99,640,\n10,200,6400,0,199,640,\n"
	// A percentage, under another name.
	lg := read("train/time,train/batches,train/samples,epoch,step,train/device/samples_per_sec,val/accuracy\n", rows+",,,0,199,,76.5\n")
	if len(lg.Runs) != 1 || len(lg.Runs[0].Evals) != 1 || lg.Runs[0].Evals[0] != (Eval{Line: 4, Steps: 200, Accuracy: 0.765}) {
		t.Errorf("percentage: %+v", lg.Runs)
	}
	// Two candidates: neither is read.
	lg = read("train/time,train/batches,train/samples,epoch,step,train/device/samples_per_sec,val_acc_step,val_acc_epoch\n", "5,100,3200,0,99,640,,\n10,200,6400,0,199,640,,\n,,,0,200,,0.7,0.75\n")
	if len(lg.Runs) != 0 || len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "columns val_acc_step, val_acc_epoch all look like a validation accuracy") {
		t.Errorf("two candidates: runs %+v, notes %q", lg.Runs, lg.Notes)
	}
	// Malformed: above 100, no step.
	lg = read("train/time,train/batches,train/samples,epoch,step,train/device/samples_per_sec,val_acc\n", rows+",,,0,200,,170\n,,,0,,,0.7\n")
	if lg.Malformed != 2 || len(lg.Runs) != 0 || !strings.Contains(lg.MalformedSummary(), "val_acc 170: want a fraction from 0 to 1, or a percentage") ||
		!strings.Contains(lg.MalformedSummary(), "val_acc without a whole step") {
		t.Errorf("malformed: %s, runs %+v", lg.MalformedSummary(), lg.Runs)
	}
}
