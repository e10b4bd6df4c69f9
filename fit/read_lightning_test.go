package fit

import (
	"errors"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// TestReadLightning reads the two sample metrics.csv files of testdata,
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
		lg, err := ReadFile("testdata/" + tc.file)
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
