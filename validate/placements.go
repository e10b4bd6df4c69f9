package validate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// PlacementTable is a placement table (logs.Placements) of one model on
// one system to compare with the simulator: the step time of
// data-parallel training per placement of the devices over nodes and
// batch per device.
type PlacementTable struct {
	Source    string // the file, for messages
	Model     string // a model profile's name; required
	Precision string // the precision trained at, as Measured.Precision; required
	// System is the catalogue system the table ran on; required. Its
	// nodes' device is the one calibrated.
	System string
	// Transport and IntraTransport are the system's transports that
	// carried the gradients between nodes and inside a node; default
	// those a scenario on the system takes.
	Transport, IntraTransport string
	// Algorithm is the all-reduce; default sim.Ring, as a scenario's.
	Algorithm sim.Algorithm
	// Steps are the table's rows; those of placement [1] calibrate.
	Steps []logs.PlacementStep
	// SimSteps is the steps simulated per row; 0 for sim.DefaultSteps.
	SimSteps int
}

// PlacementClass sorts placements by how their devices are spread.
type PlacementClass string

// The classes, in the order of a report.
const (
	OneDevice   PlacementClass = "one device"           // [1]: the calibration
	OneNode     PlacementClass = "one node"             // several devices of one node
	EqualNodes  PlacementClass = "nodes, equal counts"  // several nodes, as many devices on each
	UnevenNodes PlacementClass = "nodes, uneven counts" // several nodes with different counts
)

// PlacementClasses lists the classes in report order.
var PlacementClasses = []PlacementClass{OneDevice, OneNode, EqualNodes, UnevenNodes}

// ClassOf returns the class of placement pl (devices per node); "" for
// an empty placement.
func ClassOf(pl []int) PlacementClass {
	switch {
	case len(pl) == 0:
		return ""
	case len(pl) == 1 && pl[0] == 1:
		return OneDevice
	case len(pl) == 1:
		return OneNode
	case slices.Min(pl) == slices.Max(pl):
		return EqualNodes
	}
	return UnevenNodes
}

// PlacementRow is one row of a placement table against the simulator.
type PlacementRow struct {
	logs.PlacementStep
	Class PlacementClass
	// Calibrating marks the rows of one device, to which the compute law
	// was fitted: they are no prediction and the errors leave them out.
	Calibrating bool
	// Predicted is the simulated step time and PredictedSync the
	// simulated exchange not hidden behind the backward pass
	// (sim.Breakdown.Comm).
	Predicted, PredictedSync units.Seconds
	// GradientBytes is the gradients one device all-reduces per step.
	GradientBytes units.Bytes
}

// Error returns (Predicted − StepTime)/StepTime.
func (r *PlacementRow) Error() float64 {
	return float64(r.Predicted-r.StepTime) / float64(r.StepTime)
}

// ImpliedBusRate returns the bus rate of a ring all-reduce that would take
// the measured sync time alone: 2(n−1)/n · GradientBytes / SyncTime, with
// n the row's devices, in bytes per second (NaN for one device or no sync
// time). Part of the exchange hides behind the backward pass, so the rate
// the fabric gave is at most this.
func (r *PlacementRow) ImpliedBusRate() float64 {
	n := float64(r.Devices())
	if n < 2 || !(r.SyncTime > 0) {
		return math.NaN()
	}
	return 2 * (n - 1) / n * float64(r.GradientBytes) / float64(r.SyncTime)
}

// ClassSummary sums up the predicted rows of one class.
type ClassSummary struct {
	Class PlacementClass
	Rows  int
	// MAE is the mean |PlacementRow.Error| and Bias its signed mean.
	MAE, Bias float64
	// Sync and PredictedSync are the mean measured and predicted sync
	// times.
	Sync, PredictedSync units.Seconds
	// ImpliedBusRate is the median of the rows' ImpliedBusRate, bytes/s,
	// over several nodes; NaN for one node, whose exchange crosses no
	// fabric.
	ImpliedBusRate float64
}

// PlacementReport is ComparePlacements' result.
type PlacementReport struct {
	Source, Model, Precision, System string
	Device                           string // the catalogue's key of the system's device
	Exchange                         string // the transports the multi-node rows crossed, "nccl, tcp"
	// Law is the throughput law v = b/(b/v0 + t) fitted to the rows of one
	// device: the compute of every prediction.
	Law     *fit.ThroughputFit
	Rows    []PlacementRow // in the table's order
	Classes []ClassSummary // the classes with predicted rows, in PlacementClasses order
	// MAE is the mean |PlacementRow.Error| over every predicted row.
	MAE float64
}

// ComparePlacements calibrates the compute of one device on the table's
// rows of placement [1] (fit.Throughput of the law v = b/(b/v0 + t) over
// their batches; scenarios.Calibration.Compute turns it into the
// simulator's, the roofline's optimizer update carved out of t), then
// simulates one data-parallel step of every row on its placement of the
// system's nodes (sim.Config.Placement where the counts differ), with the
// model's gradient buckets, the system's catalogue links and network under
// the table's transports as a scenario builds them (scenarios.Network),
// and compares the step time and the exposed exchange. Fewer than two
// batches of one device is an error, as is a placement the system cannot
// hold.
func ComparePlacements(tab *PlacementTable, cat *hw.Catalog, prof *model.Profiles) (*PlacementReport, error) {
	sys, node, d, err := cat.Resolve(tab.System)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tab.Source, err)
	}
	mdl, err := prof.Model(tab.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tab.Source, err)
	}
	law, err := oneDeviceLaw(tab)
	if err != nil {
		return nil, err
	}
	rep := &PlacementReport{Source: tab.Source, Model: mdl.Name, Precision: tab.Precision, System: sys.Name, Device: d.Name, Law: law}
	overNodes := false
	for _, st := range tab.Steps {
		row, exchange, err := placementRow(tab, cat, sys, node, d, mdl, law, st)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: placement %s: %w", tab.Source, st.Line, PlacementName(st.Placement), err)
		}
		switch { // the exchange of the first row over nodes, else of one node
		case len(st.Placement) > 1 && !overNodes:
			rep.Exchange, overNodes = exchange, true
		case rep.Exchange == "":
			rep.Exchange = exchange
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.summarise()
	return rep, nil
}

// PlacementName returns placement pl as a table writes it, one digit a
// node ("1234"); counts over 9 are written in brackets.
func PlacementName(pl []int) string {
	var b strings.Builder
	for _, k := range pl {
		if k >= 1 && k <= 9 {
			b.WriteByte(byte('0' + k))
		} else {
			fmt.Fprintf(&b, "(%d)", k)
		}
	}
	return b.String()
}

// oneDeviceLaw fits the throughput law to the rows of placement [1].
func oneDeviceLaw(tab *PlacementTable) (*fit.ThroughputFit, error) {
	var b, v []float64
	for _, st := range tab.Steps {
		if ClassOf(st.Placement) == OneDevice {
			b = append(b, float64(st.Batch))
			v = append(v, float64(st.Batch)/float64(st.StepTime))
		}
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s: no row of placement 1 (one device) to calibrate the compute on", tab.Source)
	}
	law, err := fit.Throughput(b, v, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: the rows of placement 1: %w", tab.Source, err)
	}
	return law, nil
}

// placementRow simulates one row st of tab, the compute from law, and
// returns it with the transports the exchange crossed.
func placementRow(tab *PlacementTable, cat *hw.Catalog, sys *hw.System, node *hw.Node, d *hw.Device, mdl *model.Model, law *fit.ThroughputFit, st logs.PlacementStep) (PlacementRow, string, error) {
	row := PlacementRow{PlacementStep: st, Class: ClassOf(st.Placement)}
	row.Calibrating = row.Class == OneDevice
	pl := st.Placement
	if len(pl) == 0 || slices.Min(pl) < 1 {
		return row, "", fmt.Errorf("want one or more nodes of 1 or more devices each")
	}
	if len(pl) > sys.MaxNodes || slices.Max(pl) > node.Devices {
		return row, "", fmt.Errorf("system %s has %d nodes of %d devices", sys.Name, sys.MaxNodes, node.Devices)
	}
	m := Measured{Model: mdl.Name, Precision: tab.Precision, Batch: st.Batch}
	cfg, err := measuredConfig(mdl, d, &m, st.Batch, 0, nil)
	if err != nil {
		return row, "", err
	}
	cal := scenarios.Calibration{V0: law.V0, T: law.T, Devices: 1}
	cfg.Compute = cal.Compute(cfg.Compute.Update)
	cfg.Comm.Algorithm = cmp.Or(tab.Algorithm, sim.Ring)
	cfg.Memory.Capacity = 0 // the table ran it: predict the time whatever the memory model says
	cfg.Steps = cmp.Or(tab.SimSteps, sim.DefaultSteps)
	_, sp, _, _ := measuredPrecisions(tab.Precision) // measuredConfig checked it
	row.GradientBytes = units.Bytes(float64(mdl.Params) * float64(sp.Size()))
	exchange := ""
	if n := row.Devices(); n > 1 {
		cfg.Comm.Interference = scenarios.DefaultInterference(d, node)
		if slices.Min(pl) != slices.Max(pl) {
			cfg.Placement = slices.Clone(pl)
		}
		p := scenarios.Point{Devices: n, Nodes: len(pl), DevicesPerNode: slices.Max(pl), Replicas: n,
			BatchPerDevice: st.Batch, GlobalBatch: st.Batch * n}
		cfg.Nodes, cfg.DevicesPerNode = p.Nodes, p.DevicesPerNode
		inter, intra, err := scenarios.Network(cat, sys.Name, scenarios.Parallelism{Transport: tab.Transport, IntraTransport: tab.IntraTransport}, &cfg, p)
		if err != nil {
			return row, "", err
		}
		exchange = strings.Join(slices.DeleteFunc([]string{intra, inter}, func(s string) bool { return s == "" }), ", ")
	}
	res, err := sim.Run(cfg)
	if err != nil {
		return row, "", err
	}
	row.Predicted, row.PredictedSync = res.StepTime, res.Breakdown.Comm
	return row, exchange, nil
}

// summarise sets the classes' summaries and the report's MAE.
func (rep *PlacementReport) summarise() {
	var sum float64
	n := 0
	for _, c := range PlacementClasses {
		s := ClassSummary{Class: c}
		var rates []float64
		for i := range rep.Rows {
			r := &rep.Rows[i]
			if r.Class != c || r.Calibrating {
				continue
			}
			e := r.Error()
			s.Rows++
			s.MAE += math.Abs(e)
			s.Bias += e
			s.Sync += r.SyncTime
			s.PredictedSync += r.PredictedSync
			if v := r.ImpliedBusRate(); !math.IsNaN(v) && c != OneNode {
				rates = append(rates, v)
			}
		}
		if s.Rows == 0 {
			continue
		}
		sum += s.MAE
		n += s.Rows
		k := float64(s.Rows)
		s.MAE, s.Bias = s.MAE/k, s.Bias/k
		s.Sync, s.PredictedSync = s.Sync/units.Seconds(k), s.PredictedSync/units.Seconds(k)
		s.ImpliedBusRate = median(rates)
		rep.Classes = append(rep.Classes, s)
	}
	rep.MAE = math.NaN()
	if n > 0 {
		rep.MAE = sum / float64(n)
	}
}

// median returns the median of xs, NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if h := len(s) / 2; len(s)%2 == 1 {
		return s[h]
	} else {
		return (s[h-1] + s[h]) / 2
	}
}
