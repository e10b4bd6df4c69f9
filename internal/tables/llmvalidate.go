package tables

import (
	"cmp"
	"fmt"
	"io"
	"strconv"

	"scaleplan/plan"
)

// LLMValidation writes what `scaleplan validate --llm` prints in format:
// each published LLM run with its layout, the published and predicted
// figure and the error, then the mean absolute error; in json and csv
// the tables "cases" and "summary".
func LLMValidation(w io.Writer, format string, v plan.LLMValidation) error {
	cases := &Table{Title: "Published LLM training runs against the operator model (docs/llm.md)",
		Header: []string{"case", "system", "gpus", "tp", "sp", "pp", "v", "dp", "micro-batch", "global batch", "recompute", "zero",
			"metric", "published", "predicted", "error (%)", "source"}}
	for _, res := range v.Results {
		c, l := res.Case, res.Layout
		cases.Rows = append(cases.Rows, []string{c.Name, c.System, strconv.Itoa(l.World()), strconv.Itoa(l.TP),
			strconv.FormatBool(l.SequenceParallel), strconv.Itoa(l.PP), strconv.Itoa(max(l.VirtualStages, 1)), strconv.Itoa(l.DP),
			strconv.Itoa(l.MicroBatch), strconv.Itoa(l.GlobalBatch), cmp.Or(string(l.Recompute), "none"), cmp.Or(string(l.Sharding), "none"), string(c.Metric),
			strconv.FormatFloat(c.Published, 'f', 2, 64), strconv.FormatFloat(res.Predicted, 'f', 2, 64),
			strconv.FormatFloat(100*res.Error, 'f', 1, 64), c.Source})
	}
	line := fmt.Sprintf("%d cases, none calibrating: mean absolute error %.1f %%", len(v.Results), 100*v.MAE)
	for _, g := range v.Groups {
		line += fmt.Sprintf("; %d %s %.1f %%", g.Cases, g.Name, 100*g.MAE)
	}
	if format == "json" || format == "csv" {
		return Write(w, format, []Named{{Key: "cases", T: cases}, {Key: "summary", T: &Table{Header: []string{"summary"}, Rows: [][]string{{line}}}}})
	}
	if err := cases.Write(w, format); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s%s\n", Bullet(format), line)
	return err
}
