package cmd

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

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
	line := "\n32       8      32            1024          112680  176.67     167.20        9.48               0.00                78.3           19986     5.55 h         -      calibrated  5796       94.6            177.7         53.3          ok\n"
	if !strings.Contains(text, line) {
		t.Fatalf("the text table of (b) staged changed; update this test's line:\n%s", text)
	}
	// An inline law has no intervals: no range, in json null.
	if rows[1]["compute"] != "calibrated" || rows[1]["time_to_train_low_s"] != nil || rows[1]["time_to_train_high_s"] != nil {
		t.Errorf("compute %v, range %v to %v; want calibrated, null, null", rows[1]["compute"], rows[1]["time_to_train_low_s"], rows[1]["time_to_train_high_s"])
	}
	for k, want := range map[string]float64{"step_s": 0.17667, "exposed_comm_s": 0.00948, "time_s": 19986, "time_to_train_s": 5.55 * 3600,
		"efficiency_percent": 94.6, "device_hours": 177.7, "energy_j": 53.3 * 3.6e6} {
		if got, ok := rows[1][k].(float64); !ok || math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s %v, want %v", k, rows[1][k], want)
		}
	}
}
