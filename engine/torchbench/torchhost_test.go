package torchbench

import (
	"encoding/csv"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readHostTable returns the quantities of a scripts/torchhost.py table in
// order and their values, its comment lines skipped.
func readHostTable(t *testing.T, text string) ([]string, map[string]float64) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	if len(rows) < 2 || !slices.Equal(rows[0], []string{"quantity", "value"}) {
		t.Fatalf("no quantity,value table:\n%s", text)
	}
	var names []string
	values := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", row[0], err)
		}
		names = append(names, row[0])
		values[row[0]] = v
	}
	return names, values
}

// TestTorchHostScript runs scripts/torchhost.py briefly and checks its
// table: the quantities of the committed compute/testdata/torch-host.csv
// in the same order, a dispatch that takes time, the header's torch
// version and CPU, and momentum SGD's four foreach calls with weight
// decay (torch/optim/sgd.py's _multi_tensor_sgd: the decay's add, the
// buffers' mul and add, the parameters' add).
func TestTorchHostScript(t *testing.T) {
	python := needPython(t)
	cmd := exec.Command(python, "../../scripts/torchhost.py", "--number", "20", "--repeats", "3", "--rounds", "1", "--budget", "0.0002")
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("torchhost.py: %v", err)
	}
	names, got := readHostTable(t, string(out))
	committed, err := os.ReadFile("../../compute/testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readHostTable(t, string(committed))
	if !slices.Equal(names, want) {
		t.Errorf("quantities %v, the committed table's %v", names, want)
	}
	if !(got["dispatch"] > 0) {
		t.Errorf("dispatch %g µs, want > 0", got["dispatch"])
	}
	if got["sgd_foreach_calls"] != 4 {
		t.Errorf("momentum SGD makes %g foreach calls, want 4", got["sgd_foreach_calls"])
	}
	for _, s := range []string{"# torch ", "# cpu ", "OMP_WAIT_POLICY=PASSIVE, threads 1"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("header lacks %q:\n%s", s, out)
		}
	}
}
