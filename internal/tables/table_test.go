package tables

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
)

// TestOutputColumnKeys checks the key rule on the headers the issue
// names and on the other forms a header takes.
func TestOutputColumnKeys(t *testing.T) {
	for _, tc := range []struct {
		scope, header string
		keys          []string
	}{
		{"", "compute (ms)", []string{"compute_s"}},
		{"", "error (%)", []string{"error_percent"}},
		{"", "global batch", []string{"global_batch"}},
		{"", "samples/s", []string{"samples_per_s"}},
		{"systems", "$/device-h", []string{"usd_per_device_h"}},
		{"", "R²", []string{"r2"}},
		{"collectives", "latency α", []string{"latency_alpha_s"}},
		{"", "cost ($)", []string{"cost_usd"}},
		{"", "energy (kWh)", []string{"energy_j"}},
		{"", "memory/device (GiB)", []string{"memory_per_device_bytes"}},
		{"", "measured busbw (GB/s)", []string{"measured_busbw_bytes_per_s"}},
		{"", "measured (us)", []string{"measured_s"}},
		{"", "measured (samples/s)", []string{"measured_samples_per_s"}},
		{"", "staleness (updates)", []string{"staleness_updates"}},
		{"", "step_ms", []string{"step_s"}},
		{"", "samples_per_s", []string{"samples_per_s"}},
		{"", "time to train", []string{"time_to_train_s"}},
		{"devices", "fp32", []string{"fp32_flop_per_s"}},
		{"devices", "memory bw", []string{"memory_bw_bytes_per_s"}},
		{"devices", "TDP", []string{"tdp_w"}},
		{"models", "forward/sample", []string{"forward_per_sample_flop"}},
		{"", "memory model's largest batch", []string{"memory_models_largest_batch"}},
		{"", "B/A measured", []string{"b_per_a_measured"}},
		{"", "S(B)", []string{"s_b"}},
		{"", "avg busbw (log)", []string{"avg_busbw_log_bytes_per_s"}},
		{"", "t 95%", []string{"t_ci95_low_s", "t_ci95_high_s"}},
		{"", "v0 95%", []string{"v0_ci95_low", "v0_ci95_high"}},
		{"comm", "t", []string{"t"}},
		{"runs", "step", []string{"step_s"}},
		{"", "step", []string{"step"}}, // bench train's step is a count
		{"", "(c) staged + verbs", []string{"c_staged_verbs"}},
	} {
		fs := columnFields(tc.scope, tc.header, nil)
		var keys []string
		for _, f := range fs {
			keys = append(keys, f.key)
			if !regexpKey.MatchString(f.key) {
				t.Errorf("%q: key %q is not snake_case ASCII", tc.header, f.key)
			}
		}
		if strings.Join(keys, " ") != strings.Join(tc.keys, " ") {
			t.Errorf("%s.%q: keys %v, want %v", tc.scope, tc.header, keys, tc.keys)
		}
	}
}

// TestOutputCellValues checks the conversion of cells to SI numbers, null
// and text against figures worked out by hand.
func TestOutputCellValues(t *testing.T) {
	for _, tc := range []struct {
		scope, header, cell string
		want                any // float64, nil or string
	}{
		{"", "time to train", "56.5 min", 3390.0},
		{"", "time to train", "2.1 h", 7560.0},
		{"", "time to train", "7.0 d", 604800.0},
		{"", "time to train", "850 us", 850e-6},
		{"", "time to train", "—", nil},
		{"", "time to train", "error", "error"},
		{"devices", "memory", "32 GiB", 34359738368.0},
		{"devices", "fp32", "15.7 TFLOP/s", 15.7e12},
		{"devices", "memory bw", "1.2 TB/s", 1.2e12},
		{"devices", "memory bw", "100 Gbit/s", 12.5e9},
		{"", "compute (ms)", "167.20", 0.1672},
		{"", "compute (ms)", "n/a", nil},
		{"", "compute (ms)", "error: out of memory", "error: out of memory"},
		{"", "error (%)", "+14.1", 14.1},
		{"", "error (%)", "-2.2", -2.2},
		{"", "energy (kWh)", "50.2", 50.2 * 3.6e6},
		{"", "measured (us)", "1,234.5", 1234.5e-6},
		{"", "memory/device (GiB)", "0.27", 289910292.0},
		{"", "residual", "-19.7%", -19.7},
		{"runs", "data wait", "2.638 ms (0.8%)", 0.002638},
		{"", "t 95%", "[51.6 ms, 55.51 ms]", 0.0516},
		{"", "v0 95%", ">= 4011", 4011.0}, // no upper limit: the low end, and null above
		{"", "devices", "4", 4.0},
		{"", "devices", "1,2", "1,2"},
		{"", "batches", "8–256", "8–256"},
		{"", "risk", "-", nil},
		{"", "risk", "", nil},
		{"", "risk", "ok", "ok"},
		{"", "z", "1e-05", 1e-05},
	} {
		got := columnFields(tc.scope, tc.header, nil)[0].cell(tc.cell)
		switch w := tc.want.(type) {
		case float64:
			n, ok := got.(jsonNum)
			if !ok {
				t.Errorf("%q in %q: %#v, want the number %g", tc.cell, tc.header, got, w)
				continue
			}
			if v := mustFloat(string(n)); math.Abs(v-w) > 1e-12*math.Abs(w) {
				t.Errorf("%q in %q: %v, want %g", tc.cell, tc.header, v, w)
			}
		default:
			if got != tc.want {
				t.Errorf("%q in %q: %#v, want %#v", tc.cell, tc.header, got, tc.want)
			}
		}
	}
}

// TestOutputOpenInterval: an interval with no upper limit (fit's ">= X"
// where the time per sample is within its error of 0) has its low end and
// a null high end.
func TestOutputOpenInterval(t *testing.T) {
	fs := columnFields("", "v0 95%", nil)
	if len(fs) != 2 || fs[0].key != "v0_ci95_low" || fs[1].key != "v0_ci95_high" {
		t.Fatalf("fields %+v", fs)
	}
	if lo, hi := fs[0].cell(">= 4011"), fs[1].cell(">= 4011"); lo != jsonNum("4011") || hi != nil {
		t.Errorf(">= 4011: low %#v, high %#v; want 4011 and nil", lo, hi)
	}
}

// TestOutputKeysUnique: two columns that the rule gives one key are an
// error, never a silently overwritten value.
func TestOutputKeysUnique(t *testing.T) {
	tb := &Table{Header: []string{"step (ms)", "step (s)"}, Rows: [][]string{{"1", "2"}}}
	for _, f := range []string{"json", "csv"} {
		err := tb.Write(&bytes.Buffer{}, f)
		if err == nil || !strings.Contains(err.Error(), `columns "step (ms)" and "step (s)" both have the key "step_s"`) {
			t.Errorf("%s: %v, want the two columns named", f, err)
		}
	}
	// Two predict variants whose labels differ in punctuation only.
	tb = &Table{Header: []string{"a-b", "a b"}, Units: map[string]string{"a-b": "seconds", "a b": "seconds"}}
	if err := tb.Write(&bytes.Buffer{}, "json"); err == nil {
		t.Error("variants a-b and a b: no error")
	}
}

// TestOutputQuantityText: QuantityKind, the schema test's guard, recognises a quantity
// left as text, and passes text that is not one.
func TestOutputQuantityText(t *testing.T) {
	for s, want := range map[string]bool{"32 GiB": true, "56.5 min": true, "12.5%": true, "infiniband-ndr 400 Gbit/s": false, "ok": false, "53.56 ms, 147.8 ms": false} {
		if got := QuantityKind(s) != ""; got != want {
			t.Errorf("QuantityKind(%q) = %q", s, QuantityKind(s))
		}
	}
}

// regexpKey is what a key may be.
var regexpKey = regexp.MustCompile(`^[a-z0-9_]+$`)

// TestJSONCell: a cell of a column without a unit is a JSON number only
// if it is written as one.
func TestJSONCell(t *testing.T) {
	for _, tc := range []struct {
		cell string
		num  bool
	}{
		{"0", true}, {"-1.5", true}, {"212.32", true}, {"1e-05", true}, {"100.0", true},
		{"1,234", false}, {"+1", false}, {"NaN", false}, {"Inf", false}, {"0x10", false}, {"007", false},
		{"16–64", false}, {"[0.1, 0.2]", false}, {"-", false}, {"", false}, {"4.2 ms", false},
	} {
		_, isNum := plainCell(tc.cell).(jsonNum)
		if isNum != tc.num {
			t.Errorf("jsonCell(%q) number %v, want %v", tc.cell, isNum, tc.num)
		}
	}
}

// chooser is a Chooser of the table named table.
type chooser struct {
	bytes.Buffer
	table string
}

func (c *chooser) Chosen() string { return c.table }

// TestWriteChoice: csv prints the first table, or the one chosen; json
// every table as an object, or the chosen one's array; a name of no
// table is an UnknownTableError listing the valid ones.
func TestWriteChoice(t *testing.T) {
	ts := []Named{
		{Key: "a", T: &Table{Header: []string{"x"}, Rows: [][]string{{"1"}}}},
		{Key: "b", T: &Table{Header: []string{"y (ms)"}, Rows: [][]string{{"2"}}}},
	}
	for _, tc := range []struct{ format, table, want string }{
		{"csv", "", "x\n1\n"},
		{"csv", "b", "y_s\n0.002\n"},
		{"json", "", "{\n  \"a\": [\n    {\n      \"x\": 1\n    }\n  ],\n  \"b\": [\n    {\n      \"y_s\": 0.002\n    }\n  ]\n}\n"},
		{"json", "b", "[\n  {\n    \"y_s\": 0.002\n  }\n]\n"},
		{"text", "", "x\n1\n\ny (ms)\n2\n"},
	} {
		w := &chooser{table: tc.table}
		if err := Write(w, tc.format, ts); err != nil || w.String() != tc.want {
			t.Errorf("%s --table %q: %v\n%q, want\n%q", tc.format, tc.table, err, w.String(), tc.want)
		}
	}
	err := Write(&chooser{table: "c"}, "csv", ts)
	var ut *UnknownTableError
	if !errors.As(err, &ut) || ut.Name != "c" || strings.Join(ut.Valid, ",") != "a,b" {
		t.Errorf("table c: %v, want an UnknownTableError naming a and b", err)
	}
}

// A throughput or time cell is a whole number from 10 up and keeps three
// significant digits below, so that a slow configuration or a short run
// does not print as 0.
func TestWholeCell(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.001, "0.001"}, {0.0012345, "0.00123"}, {5.0174, "5.02"}, {9.49, "9.49"}, {9.5, "10"}, {94.12, "94"}, {35372.4, "35372"}} {
		if got := WholeCell(c.v); got != c.want {
			t.Errorf("WholeCell(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
