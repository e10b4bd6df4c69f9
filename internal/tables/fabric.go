package tables

import (
	"fmt"
	"strconv"
	"strings"

	"scaleplan/fit/logs"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/validate"
)

// FabricFit is fit's tables of a fabric calibration: "fabric", one row
// per level with the catalogue's figures and the fitted ones, and
// "fabric_tests", how the fitted level predicts each test.
func FabricFit(fc *validate.FabricCalibration) []Named {
	lv := &Table{
		Title: "Fabric (nccl-tests, simulator inverted): the link bandwidth B and latency L of a level that make sim's all-reduce times best match the tests (least squares of ln(T_sim/T))",
		Header: []string{"system", "level", "transport", "algorithm", "tests", "sizes", "catalogue bandwidth", "catalogue latency",
			"bandwidth", "bandwidth 95%", "latency", "latency 95%", "mean error", "note"},
		Units: map[string]string{"catalogue bandwidth": "byte_rate", "catalogue latency": "seconds", "bandwidth": "byte_rate", "bandwidth 95%": "byte_rate",
			"latency": "seconds", "latency 95%": "seconds", "mean error": "percent"},
	}
	ts := &Table{
		Title:  "Fabric fit per test: the simulated times at the fitted links against the measured ones",
		Header: []string{"source", "level", "ranks", "nodes", "sizes", "mean error", "worst point"},
		Units:  map[string]string{"mean error": "percent"},
	}
	for _, l := range fc.Levels {
		e, c := l.Entry, l.Catalogue
		row := []string{fc.System, l.Level, Dash(e.Transport), e.Algorithm, strconv.Itoa(len(l.Tests)), "", c.Bandwidth.String(), c.Latency.String()}
		if l.Err != nil {
			row[5] = "-"
			lv.Rows = append(lv.Rows, append(row, "", "", "", "", "", l.Err.Error()))
			continue
		}
		f := l.Fit
		row[5] = strconv.Itoa(f.Sizes)
		bwi := "—"
		if e.BandwidthInterval != nil {
			bwi = "[" + e.BandwidthInterval[0].Decimal() + ", " + e.BandwidthInterval[1].Decimal() + "]"
		}
		note := ""
		if len(e.Undetermined) > 0 {
			note = fmt.Sprintf("%s not determined: no size depends on it at the fit (another link bounds them); written as found", strings.Join(e.Undetermined, " and "))
		}
		lv.Rows = append(lv.Rows, append(row, e.Bandwidth.String(), bwi, e.Latency.String(), SecondsInterval(f.LatencyInterval),
			Percent(e.Error), note))
		for _, t := range f.Tests {
			ts.Rows = append(ts.Rows, []string{t.Source, l.Level, strconv.Itoa(t.Ranks), nodesCell(t.Nodes), sizeRange(t.Points),
				Percent(t.Error), Percent(t.MaxError)})
		}
	}
	var out []Named
	for _, n := range []Named{{Key: "fabric", T: lv}, {Key: "fabric_tests", T: ts}} {
		if len(n.T.Rows) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// Percent prints a fraction as a percentage to one decimal: "3.1%".
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func nodesCell(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// sizeRange is "8 B–8.59 GB" for the sizes of a test's points, "-" for
// none.
func sizeRange(ps []logs.CollectivePoint) string {
	if len(ps) == 0 {
		return "-"
	}
	lo, hi := extent(ps, func(p logs.CollectivePoint) units.Bytes { return p.Bytes })
	return fmt.Sprintf("%s–%s", lo, hi)
}

// FabricLines says on stderr what a fabric fit left out and which levels
// it could not fit.
func FabricLines(fc *validate.FabricCalibration) []string {
	var out []string
	for _, why := range validate.TestReasons {
		if n := fc.Left[why]; n > 0 {
			out = append(out, fmt.Sprintf("fabric: %d %s left out %s", n, Plural(n, "test", "tests"), why))
		}
	}
	for _, l := range fc.Levels {
		if l.Err != nil {
			out = append(out, fmt.Sprintf("fabric: level %s of %s not fitted (%s): %v", l.Level, fc.System, strings.Join(l.Tests, ", "), l.Err))
		}
	}
	return out
}

// NetworkNote says which of r's links a --calibration sets in place of
// the catalogue's: the fabric entries of its system ("intra 200 GB/s,
// 3 us a message from f.yaml") and a comm entry of its model; "" when
// none does.
func NetworkNote(r *scenarios.Resolved) string {
	var parts []string
	for _, f := range r.Fabric {
		for _, e := range f.Cal.Fabric {
			if e.System == r.Sys.Name {
				parts = append(parts, fmt.Sprintf("%s link %v, %v a message from %s", e.Level, e.Bandwidth, e.Latency, f.Path))
			}
		}
	}
	if e := r.Comm; e != nil {
		parts = append(parts, fmt.Sprintf("all-reduce of %s costs r(p)·%v (t_comm over %s devices, from %s), exchanged after the backward pass",
			e.Model, e.TComm, JoinInts(e.Counts), r.CommBy))
	}
	if len(parts) == 0 {
		return ""
	}
	return "network: calibrated: " + strings.Join(parts, "; ")
}
