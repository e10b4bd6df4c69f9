package logs

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// PlacementStep is one row of a placement table (Format Placements): the
// step of data-parallel training on one placement of its devices over
// nodes, at one batch per device.
type PlacementStep struct {
	Line int // 1-based line of the row
	// Placement is the number of devices used on each node, in the
	// order the table gives them: [1, 2, 3, 4] is four nodes with 1, 2, 3
	// and 4 devices; [1] is one device.
	Placement []int
	Batch     int           // samples per device per step (local_bsz)
	StepTime  units.Seconds // one optimizer step: forward, backward, gradient exchange, update
	// SyncTime is the gradient exchange not hidden behind the backward
	// pass: from the last local gradient to the end of the
	// synchronisation.
	SyncTime units.Seconds
}

// Devices returns the devices of the placement, the sum of its counts.
func (p *PlacementStep) Devices() int {
	n := 0
	for _, k := range p.Placement {
		n += k
	}
	return n
}

// placementColumns are the columns of a placement table, in the order of
// the Pollux artifact's placements.csv (petuum/adaptdl, branch
// osdi21-artifact, simulator/traces/MODEL/placements.csv).
var placementColumns = []string{"placement", "local_bsz", "step_time", "sync_time"}

// placementHeader returns the index of each of placementColumns in a
// header line h, comma-separated, and whether h names them all.
func placementHeader(h string) (idx [4]int, ok bool) {
	idx = [4]int{-1, -1, -1, -1}
	for i, f := range strings.Split(h, ",") {
		for j, c := range placementColumns {
			if strings.EqualFold(strings.TrimSpace(f), c) && idx[j] < 0 {
				idx[j] = i
			}
		}
	}
	for _, i := range idx {
		if i < 0 {
			return idx, false
		}
	}
	return idx, true
}

// readPlacements reads a placement table line by line within the limits
// of lr: # comment lines, a header naming placementColumns (in any order,
// with other columns besides, which are not read), then one row per
// placement and batch. A row whose placement is not digits 1 to 9 (one
// a node), whose batch is not a whole number from 1 to MaxBatch, whose
// step time is outside [MinStepTime, MaxStepTime], whose sync time is
// not in [0, step time], or that lacks a column, is malformed.
func readPlacements(lr *lineReader, lg *Log) error {
	var idx [4]int
	header := false
	for {
		l, ok := lr.next()
		if !ok {
			return lr.err
		}
		t := bytes.TrimSpace(l)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if !header {
			if idx, header = placementHeader(string(t)); !header {
				lg.malformed(lr.n, t, fmt.Errorf("header: want the columns %s", strings.Join(placementColumns, ", ")))
				return nil
			}
			continue
		}
		st, err := placementRow(string(t), idx)
		if err != nil {
			lg.malformed(lr.n, t, err)
			continue
		}
		st.Line = lr.n
		lg.addPlacement(st)
	}
}

// placementRow parses one row of a placement table whose columns are at
// idx (placementColumns' order).
func placementRow(row string, idx [4]int) (PlacementStep, error) {
	f := strings.Split(row, ",")
	for j, i := range idx {
		if i >= len(f) {
			return PlacementStep{}, fmt.Errorf("%d columns: want %s in column %d", len(f), placementColumns[j], i+1)
		}
	}
	var st PlacementStep
	var err error
	if st.Placement, err = parsePlacement(strings.TrimSpace(f[idx[0]])); err != nil {
		return st, err
	}
	b, err := strconv.Atoi(strings.TrimSpace(f[idx[1]]))
	if err != nil || b < 1 || b > MaxBatch {
		return st, fmt.Errorf("local_bsz %s: want a whole number of samples from 1 to %d", quote(f[idx[1]]), MaxBatch)
	}
	st.Batch = b
	step, err := strconv.ParseFloat(strings.TrimSpace(f[idx[2]]), 64)
	if err != nil || !(step >= MinStepTime && step <= MaxStepTime) {
		return st, fmt.Errorf("step_time %s: want seconds from %g to %g", quote(f[idx[2]]), MinStepTime, MaxStepTime)
	}
	sync, err := strconv.ParseFloat(strings.TrimSpace(f[idx[3]]), 64)
	if err != nil || !(sync >= 0 && sync <= step) || math.IsInf(sync, 0) {
		return st, fmt.Errorf("sync_time %s: want seconds from 0 to the step time %g", quote(f[idx[3]]), step)
	}
	st.StepTime, st.SyncTime = units.Seconds(step), units.Seconds(sync)
	return st, nil
}

// parsePlacement reads a placement, one digit 1 to 9 a node ("1234"). A
// line holds at most MaxLineBytes digits, so the devices stay under
// MaxDevices.
func parsePlacement(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("placement \"\": want one digit 1 to 9 a node, such as 1234")
	}
	pl := make([]int, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '1' || c > '9' {
			return nil, fmt.Errorf("placement %s: character %d is %q: want one digit 1 to 9 a node, such as 1234", quote(s), i+1, rune(c))
		}
		pl = append(pl, int(c-'0'))
	}
	return pl, nil
}

// addPlacement appends st unless lg holds MaxRecords records, runs,
// collective tests and placement steps, which marks lg over the limit.
func (lg *Log) addPlacement(st PlacementStep) {
	if lg.count() >= MaxRecords {
		lg.over = true
		return
	}
	lg.Placements = append(lg.Placements, st)
}
