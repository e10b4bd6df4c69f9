package logs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"

	"scaleplan/internal/benchlog"
)

// TestReadFiles reads two sample logs in order, calling back on each, and
// refuses a file named twice before reading any.
func TestReadFiles(t *testing.T) {
	a, b := filepath.Join("..", "testdata", "seed003.csv"), filepath.Join("..", "testdata", "horovod_resnet50.txt")
	var called []string
	lgs, err := ReadFiles([]string{a, b}, func(lg *Log) { called = append(called, lg.Name) })
	if err != nil || len(lgs) != 2 || lgs[0].Format != CSV || lgs[1].Format != Horovod || !reflect.DeepEqual(called, []string{a, b}) {
		t.Fatalf("%v: %d logs, called on %q", err, len(lgs), called)
	}
	_, err = ReadFiles([]string{a, b, "../testdata/../testdata/seed003.csv"}, func(*Log) { t.Error("read a log before refusing") })
	want := "../testdata/../testdata/seed003.csv is given twice (also as ../testdata/seed003.csv): its records would count twice"
	if !errors.Is(err, ErrRepeated) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	var pe *fs.PathError
	if _, err := ReadFiles([]string{"missing.log"}, nil); !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != "missing.log" {
		t.Errorf("missing file: %v", err)
	}
}

// renameLog is a log of records on GPU, V100 and no device, and runs on
// eight GPUs and two devices of no kind.
func renameLog(f Format) *Log {
	return &Log{
		Format:  f,
		Records: []benchlog.Record{{Device: "GPU"}, {Device: "V100"}, {}},
		Runs:    []Run{{Device: "8xGPU"}, {Device: "2x?"}, {Device: "1xGX2570M5"}},
	}
}

func devices(lg *Log) []string {
	var d []string
	for _, r := range lg.Records {
		d = append(d, r.Device)
	}
	for _, r := range lg.Runs {
		d = append(d, r.Device)
	}
	return d
}

// TestRename: a name alone names the unnamed devices, FROM=TO pairs
// rename their FROM in any case, MLPerf's platforms stay, and Check
// refuses a spec that renamed nothing.
func TestRename(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		format Format
		want   []string
		check  string // Check's error, "" for none
	}{
		{"", Torchvision, []string{"GPU", "V100", "", "8xGPU", "2x?", "1xGX2570M5"}, ""},
		{"h100", Torchvision, []string{"h100", "V100", "h100", "8xh100", "2xh100", "1xGX2570M5"}, ""},
		{"v100=v100-sxm2-16gb, gpu=a100", Torchvision, []string{"a100", "v100-sxm2-16gb", "", "8xa100", "2x?", "1xGX2570M5"}, ""},
		{"gpu=a100", MLPerf, []string{"a100", "V100", "", "8xGPU", "2x?", "1xGX2570M5"}, ""},
		{"v100=x,p100=y", Torchvision, []string{"GPU", "x", "", "8xGPU", "2x?", "1xGX2570M5"}, `"v100=x,p100=y": no record is on device "p100" (the records' devices: GPU, V100)`},
	} {
		d, err := ParseRename(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		lg := renameLog(tc.format)
		d.Apply(lg)
		if got := devices(lg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: devices %q, want %q", tc.spec, got, tc.want)
		}
		if err := d.Check(); (err == nil) != (tc.check == "") || err != nil && err.Error() != tc.check {
			t.Errorf("%q: check %v, want %q", tc.spec, err, tc.check)
		}
	}
	d, _ := ParseRename("h100")
	d.Apply(&Log{Records: []benchlog.Record{{Device: "V100"}}})
	if err := d.Check(); err == nil || err.Error() != `"h100": every record names its device (V100); rename one with FROM=TO` {
		t.Errorf("every device named: %v", err)
	}
	for _, bad := range []string{"a=", "=b", "a=b=c", "a=b,,"} {
		if _, err := ParseRename(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	var none *Rename
	none.Apply(renameLog(CSV))
	if err := none.Check(); err != nil {
		t.Errorf("nil rename: %v", err)
	}
}

// TestNameModel names the records (but headers and links) and runs that
// name no model, and counts them.
func TestNameModel(t *testing.T) {
	lg := &Log{
		Records: []benchlog.Record{{Model: "bert"}, {}, {Kind: benchlog.KindHeader}, {Kind: benchlog.KindLink}},
		Runs:    []Run{{}, {Model: "gpt"}},
	}
	if n := NameModel([]*Log{lg}, "resnet50"); n != 2 {
		t.Errorf("named %d, want 2", n)
	}
	got := []string{lg.Records[0].Model, lg.Records[1].Model, lg.Records[2].Model, lg.Records[3].Model, lg.Runs[0].Model, lg.Runs[1].Model}
	if want := []string{"bert", "resnet50", "", "", "resnet50", "gpt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("models %q, want %q", got, want)
	}
	if n := NameModel([]*Log{lg}, "x"); n != 0 {
		t.Errorf("named %d again, want 0", n)
	}
}

func TestEvaluated(t *testing.T) {
	plain := &Log{Runs: []Run{{}}}
	if Evaluated([]*Log{plain}) || Evaluated(nil) {
		t.Error("runs without evaluations evaluated")
	}
	if !Evaluated([]*Log{plain, {Runs: []Run{{Evals: []Eval{{Steps: 1}}}}}}) {
		t.Error("a run with evaluations not evaluated")
	}
}
