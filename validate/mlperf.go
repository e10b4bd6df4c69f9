package validate

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"scaleplan/fit"
	"scaleplan/internal/config"
	"scaleplan/internal/mlperfepochs"
	"scaleplan/scenarios"
)

// CaseEpochs makes a time-to-train case count its steps to target with
// the epochs law E(B) = E_min·(1 + B/B_noise) (fit.Epochs) fitted to the
// MLPerf Training submissions of a table written by scripts/mlperfepochs
// (internal/mlperfepochs, docs/mlperf-epochs.md) without
// the case's own round: leave one round out, so that no case predicts the
// runs its law was fitted to.
type CaseEpochs struct {
	// Data is the name of a table embedded in scaleplan (resnet, bert,
	// ssd, retinanet, maskrcnn: internal/mlperfepochs, read wherever
	// scaleplan runs) or else the path of a table scripts/mlperfepochs
	// extract wrote, relative to the case file's directory. Required.
	Data string `yaml:"data"`
	// Optimizer is the optimizer family whose closed-division rows are
	// fitted: lars, sgd, lamb, adam. Required.
	Optimizer string `yaml:"optimizer"`
	// Round is the case's MLPerf round ("v2.1"); its rows are left out of
	// the fit. Required.
	Round string `yaml:"round"`
	// System is the submission's system directory name; its rows of
	// every round are left out too, since MLPerf rounds re-publish a
	// system's earlier runs (CoreWeave's 448-node ResNet-50 logs of v3.0
	// are in v3.1 and v4.0 again). Default "" (none).
	System string `yaml:"system"`
}

// epochsRow is one submission of a scripts/mlperfepochs table.
type epochsRow struct {
	Round, System, Division, Optimizer string
	// Unit is what Epochs counts: "samples" (BERT's tables) or epochs
	// (any other value, or a table without a unit column).
	Unit          string
	Batch, Epochs float64
}

// readEpochsRows reads the columns round, system, division, optimizer,
// global_batch and mean of a scripts/mlperfepochs table, and its unit
// where it has one.
func readEpochsRows(r io.Reader, name string) ([]epochsRow, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"round", "system", "division", "optimizer", "global_batch", "mean"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: header has no %s column (want round, system, division, optimizer, global_batch, mean)", name, h)
		}
	}
	var rows []epochsRow
	for i, rec := range recs[1:] {
		b, err1 := strconv.ParseFloat(rec[col["global_batch"]], 64)
		e, err2 := strconv.ParseFloat(rec[col["mean"]], 64)
		if err1 != nil || err2 != nil || !(b > 0) || !(e > 0) {
			return nil, fmt.Errorf("%s:%d: global_batch %q and mean %q: want numbers > 0", name, i+2, rec[col["global_batch"]], rec[col["mean"]])
		}
		row := epochsRow{Round: rec[col["round"]], System: rec[col["system"]], Division: rec[col["division"]],
			Optimizer: mlperfepochs.OptimizerFamily(rec[col["optimizer"]]), Batch: b, Epochs: e}
		if u, ok := col["unit"]; ok {
			row.Unit = rec[u]
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// leaveRoundOut returns the batches and epochs of the closed-division
// rows of optimizer opt that are neither of round nor of system (when
// system is not ""), and whether they count samples rather than epochs
// (all of them: a table mixing the two is an error).
func leaveRoundOut(rows []epochsRow, opt, round, system string) (batch, epochs []float64, samples bool, err error) {
	kinds := map[bool]int{}
	for _, r := range rows {
		if r.Division == "closed" && r.Optimizer == opt && r.Round != round && (system == "" || r.System != system) {
			batch, epochs = append(batch, r.Batch), append(epochs, r.Epochs)
			kinds[r.Unit == "samples"]++
		}
	}
	if len(kinds) > 1 {
		return nil, nil, false, fmt.Errorf("%d rows count samples and %d epochs: want one unit", kinds[true], kinds[false])
	}
	return batch, epochs, kinds[true] > 0, nil
}

// epochsCurve fits the case's law without its round, for a data set of n
// samples per epoch (1 where the table counts samples, BERT's), and
// returns it as a steps-to-target curve. dir is the case file's
// directory, which a table's relative path is taken from.
func (e *CaseEpochs) epochsCurve(n float64, dir string) (*scenarios.StepsToTarget, error) {
	data, name, err := e.table(dir)
	if err != nil {
		return nil, fmt.Errorf("epochs.data: %w", err)
	}
	rows, err := readEpochsRows(bytes.NewReader(data), name)
	if err != nil {
		return nil, fmt.Errorf("epochs.data: %w", err)
	}
	b, ep, samples, err := leaveRoundOut(rows, e.Optimizer, e.Round, e.System)
	if err != nil {
		return nil, fmt.Errorf("epochs.data: %s: %w", name, err)
	}
	if samples {
		n = 1
	}
	law, err := fit.Epochs(b, ep, n, nil)
	if err != nil {
		return nil, fmt.Errorf("epochs: %s without round %s (%d rows): %w", e.Optimizer, e.Round, len(b), err)
	}
	st := law.Steps
	curve := &scenarios.StepsToTarget{SMin: st.SMin, BNoise: st.BNoise,
		Source: fmt.Sprintf("%s, %s, fitted without round %s (%d submissions)", name, e.Optimizer, e.Round, len(b))}
	if finiteInterval(st.SMinInterval) && finiteInterval(st.BNoiseInterval) {
		curve.SMinInterval, curve.BNoiseInterval = st.SMinInterval[:], st.BNoiseInterval[:]
	}
	return curve, nil
}

// table returns the bytes of the case's table and the name to cite it by:
// an embedded table's repository path, or the file's path.
func (e *CaseEpochs) table(dir string) ([]byte, string, error) {
	if slices.Contains(mlperfepochs.Names(), e.Data) {
		data, err := mlperfepochs.Read(e.Data)
		return data, path.Join(mlperfepochs.Dir, e.Data+".csv"), err
	}
	p := e.Data
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	data, err := config.ReadFile(p, "epochs table")
	if err != nil {
		return nil, "", fmt.Errorf("%s: not an embedded table (%s) nor a readable file: %w", e.Data, strings.Join(mlperfepochs.Names(), ", "), err)
	}
	return data, p, nil
}

// checkEpochs adds the problems of case c's epochs law, at path p, to ps.
func checkEpochs(c *Case, p string, ps *config.Problems) {
	e := c.Epochs
	if e == nil {
		return
	}
	if c.Metric != TimeToTrain {
		ps.Addf(p+".epochs", "only a %s case counts epochs, not %s", TimeToTrain, c.Metric)
	}
	if e.Data == "" {
		ps.Addf(p+".epochs.data", "required: an embedded table (%s) or the path of a table of scripts/mlperfepochs", strings.Join(mlperfepochs.Names(), ", "))
	}
	if e.Optimizer == "" {
		ps.Addf(p+".epochs.optimizer", "required: the optimizer family fitted (lars, sgd, lamb, adam)")
	}
	if e.Round == "" {
		ps.Addf(p+".epochs.round", "required: the case's MLPerf round, left out of the fit (v2.1)")
	}
}

// finiteInterval reports whether both ends of iv are finite.
func finiteInterval(iv [2]float64) bool {
	return !math.IsNaN(iv[0]) && !math.IsNaN(iv[1]) && !math.IsInf(iv[0], 0) && !math.IsInf(iv[1], 0)
}
