package predict

import (
	"fmt"
	"strconv"
)

// Pick is one row of one prediction.
type Pick struct {
	Prediction *Prediction // the prediction the row belongs to; nil when none was found
	Row        *Row        // the row; nil when none was found
}

// Found reports whether the pick holds a row.
func (p Pick) Found() bool { return p.Row != nil }

// Summary is the answer a study gives: the fastest configuration, the
// fastest whose global batch the recipe is known to handle, the fastest
// that still uses the devices efficiently, and where the risk begins.
type Summary struct {
	// Fastest has the shortest time to target of all rows.
	Fastest Pick
	// FastestSafe has the shortest time among rows that are not at risk:
	// whose global batch is within the recipe's known limit (or whose
	// limit is unknown) and within the training set.
	FastestSafe Pick
	// Efficient has the shortest time among rows whose scaling efficiency
	// is at least EfficiencyThreshold.
	Efficient Pick
	// Limit is the largest global batch known to reach the target, the
	// smallest over the predictions; 0 unknown.
	Limit int
	// Risk is the risk of a global batch just past Limit (with the
	// recipe's known shortfall), for the closing line.
	Risk Risk
}

// Summarize finds the picks of a Summary among the rows of ps that were
// simulated.
func Summarize(ps []*Prediction) Summary {
	var s Summary
	better := func(cur Pick, row *Row) bool {
		return cur.Row == nil || row.Time < cur.Row.Time
	}
	for _, p := range ps {
		if l := p.Steps.Limit(); l > 0 && (s.Limit == 0 || l < s.Limit) {
			s.Limit = l
			s.Risk = RiskOf(p.Scenario.Rcp, l, l+1)
		}
		for i := range p.Rows {
			row := &p.Rows[i]
			if !row.OK() {
				continue
			}
			if better(s.Fastest, row) {
				s.Fastest = Pick{p, row}
			}
			if !row.Risk.AtRisk() && better(s.FastestSafe, row) {
				s.FastestSafe = Pick{p, row}
			}
			if row.Efficiency >= EfficiencyThreshold && better(s.Efficient, row) {
				s.Efficient = Pick{p, row}
			}
		}
	}
	return s
}

// Lines returns the closing lines a person can act on, such as
//
//	fastest: (c) staged + verbs at 512 devices (128 nodes), batch 32 per device, 21.9 min — at risk: ...
//	fastest within the known batch: (c) staged + verbs at 32 devices (8 nodes), batch 32 per device, 5.27 h
//	best efficiency ≥ 80%: (c) staged + verbs at 512 devices (128 nodes), batch 32 per device, 21.9 min (89% efficiency), at risk
//	at risk beyond global batch 1,024 (known: at 4,096 the recipe ended 0.05 below 1,024's)
func (s Summary) Lines() []string {
	if !s.Fastest.Found() {
		return []string{"no configuration could be simulated"}
	}
	var out []string
	f := "fastest: " + s.Fastest.describe()
	if s.Fastest.Row.Risk.AtRisk() {
		f += " — " + s.Fastest.Row.Risk.String()
	}
	out = append(out, f)
	if s.FastestSafe.Found() && s.FastestSafe.Row != s.Fastest.Row {
		label := "fastest within the known batch: "
		if s.Limit == 0 {
			// No limit is known: the fastest is at risk for a batch
			// past the training set (Risk.PastDataSet).
			label = "fastest within the training set: "
		}
		out = append(out, label+s.FastestSafe.describe())
	}
	if s.Efficient.Found() {
		e := s.Efficient
		line := fmt.Sprintf("best efficiency ≥ %.0f%%: %s (%.0f%% efficiency)", 100*EfficiencyThreshold, e.describe(), 100*e.Row.Efficiency)
		if e.Row.Risk.AtRisk() {
			line += ", at risk"
		}
		out = append(out, line)
	} else {
		out = append(out, fmt.Sprintf("best efficiency ≥ %.0f%%: none beyond the smallest size", 100*EfficiencyThreshold))
	}
	switch {
	case s.Limit > 0:
		line := "at risk beyond global batch " + Group(int64(s.Limit))
		if sf := s.Risk.Shortfall; sf != nil {
			line += fmt.Sprintf(" (known: at %s the recipe ended %g below %s's)", Group(sf.GlobalBatch), sf.Drop, Group(sf.ComparedTo))
		}
		out = append(out, line)
	default:
		out = append(out, "risk: the recipe gives no largest global batch known to reach its target")
	}
	return out
}

func (p Pick) describe() string {
	r := p.Row
	where := fmt.Sprintf("%d devices", r.Point.Devices)
	if r.Point.Nodes > 1 {
		where += fmt.Sprintf(" (%d nodes)", r.Point.Nodes)
	}
	label := p.Prediction.Label
	return fmt.Sprintf("%s at %s, batch %s per device, %s", label, where, strconv.Itoa(r.Point.BatchPerDevice), Duration(r.Time))
}
