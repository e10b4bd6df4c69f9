package cmd

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
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
	tb := &table{Header: []string{"step (ms)", "step (s)"}, Rows: [][]string{{"1", "2"}}}
	for _, f := range []string{"json", "csv"} {
		err := tb.write(&bytes.Buffer{}, f)
		if err == nil || !strings.Contains(err.Error(), `columns "step (ms)" and "step (s)" both have the key "step_s"`) {
			t.Errorf("%s: %v, want the two columns named", f, err)
		}
	}
	// Two predict variants whose labels differ in punctuation only.
	tb = &table{Header: []string{"a-b", "a b"}, Units: map[string]string{"a-b": "seconds", "a b": "seconds"}}
	if err := tb.write(&bytes.Buffer{}, "json"); err == nil {
		t.Error("variants a-b and a b: no error")
	}
}

// TestOutputQuantityText: the schema test's guard recognises a quantity
// left as text, and passes text that is not one.
func TestOutputQuantityText(t *testing.T) {
	for s, want := range map[string]bool{"32 GiB": true, "56.5 min": true, "12.5%": true, "infiniband-ndr 400 Gbit/s": false, "ok": false, "53.56 ms, 147.8 ms": false} {
		if got := quantityText(s) != ""; got != want {
			t.Errorf("quantityText(%q) = %q", s, quantityText(s))
		}
	}
}

// TestOutputCSVOneTable: csv prints one table, the main one by default
// and the one --table names; a wrong name lists the valid ones.
func TestOutputCSVOneTable(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		header string
	}{
		{[]string{"catalog"}, "system,node,max_nodes,devices_per_node,device,fabric,transports,usd_per_device_h"},
		{[]string{"catalog", "--table", "devices"}, "device,vendor,kind,fp32_flop_per_s,fp16_flop_per_s,memory_bytes,memory_bw_bytes_per_s,tdp_w"},
		{[]string{"predict", "--devices", "4,32"}, "devices,global_batch,a_default_s,b_staged_s,c_staged_verbs_s,risk"},
		{[]string{"predict", "--devices", "4,32", "--table", "notes"}, "variant,note"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx1", "--max-devices", "16"}, "system,devices,nodes,precision,batch_per_device,"},
		{[]string{"validate"}, "case,metric,configuration,predicted,published,error_percent,"},
		{[]string{"validate", "--table", "summary"}, "summary"},
		{[]string{"fit", "testdata/fit/bench_resnet50.jsonl", "--table", "excluded"}, "group,batch,samples_per_s,law,residual_percent,z,source"},
	} {
		out, stderr, code := runCLI(append(tc.args, "--format", "csv")...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Errorf("%v: not one csv table: %v\n%s", tc.args, err, out)
			continue
		}
		if !strings.HasPrefix(strings.Join(recs[0], ","), tc.header) || strings.Contains(out, "\n\n") {
			t.Errorf("%v: header %v, want %s and one table:\n%s", tc.args, recs[0], tc.header, out)
		}
	}
	_, stderr, code := runCLI("catalog", "--format", "csv", "--table", "gpus")
	if code != exitUsage || !strings.Contains(stderr, `--table "gpus": no such table in this output (valid: systems, devices, models, recipes, scenarios)`) {
		t.Errorf("--table gpus: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"catalog", "--table", "devices"}, {"predict", "--format", "md", "--devices", "4", "tsubame3-resnet50-caffe2-staged", "--table", "notes"}} {
		_, stderr, code := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, ": --table applies to --format csv or json; --format ") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	out, _, _ := runCLI("catalog", "--help")
	if !strings.Contains(out, "--table NAME") || !strings.Contains(out, "csv default: systems") {
		t.Errorf("catalog --help does not describe --table:\n%s", out)
	}
}

// TestOutputCSVMatchesJSON: a table's csv and json carry the same keys
// and values, and the text table's figures in SI units.
func TestOutputCSVMatchesJSON(t *testing.T) {
	args := []string{"predict", "--devices", "4,32", "--table", "b_staged"}
	csvOut, _, _ := runCLI(append(args, "--format", "csv")...)
	jsonOut, _, _ := runCLI(append(args, "--format", "json")...)
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(jsonOut), &rows); err != nil {
		t.Fatalf("%v\n%s", err, jsonOut)
	}
	if len(rows) != len(recs)-1 || len(rows) != 2 {
		t.Fatalf("%d json rows, %d csv rows; want 2", len(rows), len(recs)-1)
	}
	for i, r := range rows {
		for j, k := range recs[0] {
			got := recs[i+1][j]
			switch v := r[k].(type) {
			case float64:
				if c, err := strconv.ParseFloat(got, 64); err != nil || c != v {
					t.Errorf("row %d %s: csv %q, json %v", i, k, got, v)
				}
			case string:
				if got != v {
					t.Errorf("row %d %s: csv %q, json %q", i, k, got, v)
				}
			case nil:
				if got != "" {
					t.Errorf("row %d %s: csv %q, json null", i, k, got)
				}
			}
		}
	}
	// 32 devices: the text table's figures, in SI units.
	text, _, _ := runCLI("predict", "--devices", "4,32")
	line := "\n32       8      32            1024          112680  171.96     167.20        4.76               0.00                78.3           19455     5.40 h         5955       97.0            172.9         51.9          ok\n"
	if !strings.Contains(text, line) {
		t.Fatalf("the text table of (b) staged changed; update this test's line:\n%s", text)
	}
	for k, want := range map[string]float64{"step_s": 0.17196, "exposed_comm_s": 0.00476, "time_s": 19455, "time_to_train_s": 5.40 * 3600,
		"efficiency_percent": 97, "device_hours": 172.9, "energy_j": 51.9 * 3.6e6} {
		if got, ok := rows[1][k].(float64); !ok || math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s %v, want %v", k, rows[1][k], want)
		}
	}
}

// regexpKey is what a key may be.
var regexpKey = regexp.MustCompile(`^[a-z0-9_]+$`)
