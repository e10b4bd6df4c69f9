package logs

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReadPlacements reads the Pollux artifact's ResNet-50 table
// (testdata/measurements/pollux-g4dn-imagenet.csv): 108 placements at 8
// batches each, the first and last rows as the file prints them.
func TestReadPlacements(t *testing.T) {
	lg, err := ReadFile("../../testdata/measurements/pollux-g4dn-imagenet.csv")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Placements || lg.Malformed != 0 || len(lg.Records) != 0 || len(lg.Placements) != 108*8 {
		t.Fatalf("format %s, %s, %d records, %d placement rows", lg.Format, lg.MalformedSummary(), len(lg.Records), len(lg.Placements))
	}
	first, last := lg.Placements[0], lg.Placements[len(lg.Placements)-1]
	if first.Line != 22 || !slices.Equal(first.Placement, []int{1}) || first.Batch != 20 || first.StepTime != 0.14740917682647706 || first.SyncTime != 0.0012090879917144776 {
		t.Errorf("first row %+v", first)
	}
	if !slices.Equal(last.Placement, []int{4, 4, 4, 4}) || last.Devices() != 16 || last.Batch != 200 || last.Line != 885 || last.StepTime != 1.0462684392929078 || last.SyncTime != 0.008119945526123046 {
		t.Errorf("last row %+v", last)
	}
}

// TestReadPlacementsMalformed: a truncated row, a placement with a 0 or a
// letter, a sync time above the step time and a batch of 0 are malformed
// lines, each named by its line; the good rows are kept.
func TestReadPlacementsMalformed(t *testing.T) {
	data := "# comment\nplacement,local_bsz,step_time,sync_time\n" +
		"1,20,0.15,0.001\n" + // line 3, good
		"12,20,0.3\n" + // 4: truncated
		"102,20,0.3,0.1\n" + // 5: digit 0
		"1a,20,0.3,0.1\n" + // 6: a letter
		"22,20,0.3,0.4\n" + // 7: sync over step
		"22,0,0.3,0.1\n" + // 8: batch 0
		"1234,64,0.41,0.05\n" // 9, good
	lg, err := Read(strings.NewReader(data), "p.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Placements) != 2 || lg.Placements[1].Line != 9 || !slices.Equal(lg.Placements[1].Placement, []int{1, 2, 3, 4}) {
		t.Fatalf("rows %+v", lg.Placements)
	}
	want := []string{"line 4: 3 columns: want sync_time in column 4",
		`line 5: placement "102": character 2 is '0'`,
		`line 6: placement "1a": character 2 is 'a'`,
		"line 7: sync_time", "line 8: local_bsz"}
	if lg.Malformed != 5 || len(lg.Errors) != 5 {
		t.Fatalf("%s", lg.MalformedSummary())
	}
	for i, w := range want {
		if !strings.Contains(lg.Errors[i].Error(), w) {
			t.Errorf("error %d: %v, want %q", i, lg.Errors[i], w)
		}
	}
}

// TestReadPlacementsNone: a header alone, or rows that are all
// malformed, is ErrNoRecords naming the file and what a row looks like.
func TestReadPlacementsNone(t *testing.T) {
	_, err := Read(strings.NewReader("placement,local_bsz,step_time,sync_time\n0,1,1,0\n"), "none.csv")
	if !errors.Is(err, ErrNoRecords) || !strings.Contains(err.Error(), "none.csv") || !strings.Contains(err.Error(), "1234,64,0.41,0.05") || !strings.Contains(err.Error(), "line 2: placement") {
		t.Errorf("error %v", err)
	}
}

// TestReadPlacementsLimit: past MaxRecords rows a table is an error
// wrapping ErrLimit.
func TestReadPlacementsLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("half a million rows")
	}
	var b bytes.Buffer
	b.WriteString("placement,local_bsz,step_time,sync_time\n")
	for range MaxRecords + 1 {
		fmt.Fprintf(&b, "44,8,0.5,0.1\n")
	}
	_, err := Read(bytes.NewReader(b.Bytes()), "big.csv")
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "big.csv: more than 500000 records, runs, collective tests or placement rows") {
		t.Errorf("error %v", err)
	}
}
