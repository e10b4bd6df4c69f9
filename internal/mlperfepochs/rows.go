package mlperfepochs

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Header is the CSV header of a benchmark's table.
var Header = []string{"round", "submitter", "system", "division", "accelerators", "global_batch", "optimizer",
	"unit", "runs", "reached", "mean", "std", "min", "max", "repo", "commit", "path"}

// Row is one row of a benchmark's table as read back: one submission.
type Row struct {
	Round, Submitter, System, Division string
	Accelerators                       int
	GlobalBatch                        float64
	Optimizer, Unit                    string
	Runs, Reached                      int
	Mean, Std, Min, Max                float64
	Source                             string // repo@commit:path
}

// ReadRows reads a benchmark's table, naming the line of a bad field;
// name names the table in errors.
func ReadRows(r io.Reader, name string) ([]Row, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], Header) {
		return nil, fmt.Errorf("%s: line 1: want the header %s", name, strings.Join(Header, ","))
	}
	var rows []Row
	for i, rec := range recs[1:] {
		var row Row
		var nums [8]float64
		for j, col := range []int{4, 5, 8, 9, 10, 11, 12, 13} {
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("%s: line %d: %s %q: want a finite number >= 0", name, i+2, Header[col], rec[col])
			}
			nums[j] = v
		}
		row.Round, row.Submitter, row.System, row.Division, row.Optimizer, row.Unit = rec[0], rec[1], rec[2], rec[3], rec[6], rec[7]
		row.Accelerators, row.GlobalBatch, row.Runs, row.Reached = int(nums[0]), nums[1], int(nums[2]), int(nums[3])
		row.Mean, row.Std, row.Min, row.Max = nums[4], nums[5], nums[6], nums[7]
		row.Source = rec[14] + "@" + rec[15] + ":" + rec[16]
		if !(row.GlobalBatch >= 1) || !(row.Mean > 0) {
			return nil, fmt.Errorf("%s: line %d: global_batch %v, mean %v: want >= 1 and > 0", name, i+2, row.GlobalBatch, row.Mean)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// OptimizerFamily groups optimizers that share a law: SGD with or
// without momentum is "sgd"; any other optimizer is its own family.
func OptimizerFamily(opt string) string {
	if opt == "sgd_with_momentum" || opt == "momentum" {
		return "sgd"
	}
	return opt
}
