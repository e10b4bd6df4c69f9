package plan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Defaults of a Request.
const (
	// DefaultMaxDevices bounds the device counts a plan searches.
	DefaultMaxDevices = 1024
	// ScreenSteps is the number of steps the search simulates to compare
	// configurations; the configuration it keeps for each system and
	// device count is then predicted with predict.Options.Steps, as
	// predict does.
	ScreenSteps = 3
	// Tie is the relative difference in time below which the search
	// treats two configurations as equally fast and keeps the first.
	Tie = 0.002
)

// The reasons a configuration is infeasible.
const (
	ReasonNodes      = "more nodes than the system has"
	ReasonMaxDevices = "more devices than allowed"
	ReasonBatch      = "beyond the recipe's batch limit"
	ReasonDataset    = "batch larger than the data set"
	ReasonMemory     = "out of memory"
	ReasonTransport  = "transport not available"
	ReasonStorage    = "storage not available"
	ReasonPrecision  = "precision not supported"
	ReasonShape      = "devices do not divide"
	ReasonSimulate   = "cannot be simulated"
)

// Request is what a plan searches for: the fastest and cheapest ways
// to train a recipe to its target on candidate systems, within a deadline
// and budget.
type Request struct {
	Recipe string // a recipe of the profiles; required
	Model  string // default the recipe's model
	// Systems are the candidate systems of the catalogue; default every
	// system but localhost (whose figures depend on the machine).
	Systems []string
	// MaxDevices bounds the device counts searched; default
	// DefaultMaxDevices.
	MaxDevices int
	// Deadline is the time to target to meet, seconds; 0 means none.
	Deadline units.Seconds
	// Budget bounds device-hours, dollars and energy; zero fields are no
	// bound.
	Budget Budget
	// Space is the search space; empty fields take their defaults.
	Space Space
	// Decode is where every candidate decodes its samples: host (the
	// nodes' CPU cores) or device (on the accelerators, as NVIDIA DALI
	// does; scenarios.Input.Decode). Default host.
	Decode string

	// Calibrations are calibration files written by `scaleplan fit --out`.
	// Where one has a throughput entry for the model on a candidate
	// system's device kind, of a precision searched or of none, that
	// precision computes by the measured law v = b/(b/v0 + t) instead of
	// the roofline, by the rule scenarios.PickCalibration gives predict
	// (the entry measured on the fewest devices, the first file's on a tie).
	// Unless Space.Precisions names the precisions, such a system is then
	// searched at its calibrated precisions only (ComputeSource.Skipped).
	// A file's fabric entries set the links of the systems they name
	// (scenarios.ApplyFabric). A file that applies to no candidate system
	// is an error. The name scenarios.Published stands for the published
	// calibrations built in.
	Calibrations []string

	// StepsToTarget is a calibration file of steps-to-target laws
	// S(B) = S_min·(1 + B_noise/B) (scenarios.StepsToTarget.File, such as
	// scenarios/calibrations/mlperf-epochs.yaml): the model's entry of the
	// recipe's optimizer counts every candidate's steps, and its intervals
	// give each candidate's spread of runs (predict.Row.TimeRange).
	// Default "": the recipe's epochs or iterations.
	StepsToTarget string

	Scenario scenarios.Options // extra catalogue and profile files
	Predict  predict.Options   // simulation of the kept configurations
}

// Budget bounds the cost of a training run. A zero field is no bound.
type Budget struct {
	DeviceHours float64 // device-hours
	Dollars     float64 // US dollars, from the catalogue's prices
	KWh         float64 // energy, kWh, from the catalogue's power figures
}

// IsZero reports whether the budget bounds nothing.
func (b Budget) IsZero() bool { return b == Budget{} }

// String lists the bounds: "100 device-hours, $5000, 500 kWh".
func (b Budget) String() string {
	var parts []string
	if b.DeviceHours > 0 {
		parts = append(parts, strconv.FormatFloat(b.DeviceHours, 'g', -1, 64)+" device-hours")
	}
	if b.Dollars > 0 {
		parts = append(parts, "$"+strconv.FormatFloat(b.Dollars, 'g', -1, 64))
	}
	if b.KWh > 0 {
		parts = append(parts, strconv.FormatFloat(b.KWh, 'g', -1, 64)+" kWh")
	}
	return strings.Join(parts, ", ")
}

// ParseBudget reads budgets separated by commas, each a positive number
// with its unit: "100 device-hours" (or "device-h", "GPU-hours"), "$5000"
// (or "5000 USD"), "500 kWh" (or "2 MWh"). Each unit may appear once.
func ParseBudget(s string) (Budget, error) {
	var b Budget
	for _, part := range strings.Split(s, ",") {
		t := strings.TrimSpace(part)
		if t == "" {
			continue
		}
		var num, unit string
		if rest, ok := strings.CutPrefix(t, "$"); ok {
			num, unit = strings.TrimSpace(rest), "usd"
		} else {
			i := strings.IndexFunc(t, func(r rune) bool {
				return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-')
			})
			if i < 0 {
				return b, fmt.Errorf("budget %q has no unit: want device-hours, $ or USD, or kWh", t)
			}
			num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return b, fmt.Errorf("budget %q: want a positive number and a unit, such as \"100 device-hours\", \"$5000\" or \"500 kWh\"", t)
		}
		var dst *float64
		switch unit {
		case "device-hours", "device-hour", "device-h", "gpu-hours", "gpu-hour", "gpu-h", "device hours":
			dst = &b.DeviceHours
		case "usd", "$", "dollars":
			dst = &b.Dollars
		case "kwh":
			dst = &b.KWh
		case "mwh":
			dst, v = &b.KWh, v*1000
		default:
			return b, fmt.Errorf("budget %q: unknown unit %q: want device-hours, $ or USD, or kWh", t, unit)
		}
		if *dst != 0 {
			return b, fmt.Errorf("budget %q: %s given twice", t, unit)
		}
		*dst = v
	}
	if b.IsZero() {
		return b, fmt.Errorf("budget %q bounds nothing", s)
	}
	return b, nil
}

// Space is the set of configurations a plan searches on each system. A
// nil field takes the default given with it.
type Space struct {
	// Devices lists total device counts. Default 1 and whole nodes in
	// powers of two (1, 2, 4, ... nodes) up to MaxDevices.
	Devices []int
	// Batches lists per-device batches. Default the recipe's per-device
	// batch times 2, 1, 1/2, 1/4 and 1/8 (at least 1): a roofline without
	// calibration has no fixed cost per step, so much smaller batches
	// would look efficient when they are not.
	Batches []int
	// Accumulation lists micro-batches per optimizer step. Default 1, 2,
	// 4 and the recipe's.
	Accumulation []int
	// Stages lists pipeline stages per replica. Default 1, 2, 4 and the
	// recipe's.
	Stages []int
	// AllReduce lists gradient exchanges. Default ring,
	// halving-doubling, double-tree and hierarchical, and torus-2d on
	// systems whose fabric is IPU-Link.
	AllReduce []string
	// InterNode lists hierarchical's all-reduces between nodes, among
	// scenarios.InterNodeAlgorithms. Default ring and double-tree (NCCL
	// picks between its ring and its tree by size and scale). They are
	// searched with hierarchical only, on more than one node.
	InterNode []string
	// Transports lists transports between nodes. Default every transport
	// of the system that carries traffic between nodes.
	Transports []string
	// Storage lists where samples come from: local (the nodes' drives),
	// staged (copied from the shared file server onto the drives first),
	// shared (read from the file server) or shared-db (one database file
	// on it). Default staged and shared on systems with shared storage
	// (the data set lives there), local on the others.
	Storage []string
	// Precisions lists compute precisions. Default every one of fp16,
	// bf16, tf32 and fp32 the device has a peak for.
	Precisions []string
}

// Storages are the storage options of a plan.
var Storages = []string{"local", "staged", "shared", "shared-db"}

// Config is one configuration of a plan.
type Config struct {
	System         string // catalogue system
	Devices        int    // total devices; 0 unset
	Nodes          int    // nodes used; 0 unset
	BatchPerDevice int    // micro-batch per device, samples; 0 unset
	Accumulation   int    // micro-batches per optimizer step; 0 unset
	Stages         int    // pipeline stages per replica; 0 unset
	GlobalBatch    int    // samples per optimizer step; 0 unset
	Precision      string // compute precision; "" unset
	AllReduce      string // gradient exchange; "" unset
	InterNode      string // hierarchical's exchange between nodes; "" for other exchanges, one node, or unset
	Transport      string // transport between nodes; "" inside one node or unset
	Storage        string // one of Storages; "" unset
}

// String describes the configuration; unset fields read "*":
// "dgx-a100, 16 devices (2 nodes), fp16, batch 104 × 1, 1 stage, ring over verbs, local".
func (c Config) String() string {
	star := func(v int, f string) string {
		if v == 0 {
			return "*"
		}
		return fmt.Sprintf(f, v)
	}
	str := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	dev := star(c.Devices, "%d "+plural(c.Devices, "device"))
	if c.Nodes > 0 {
		dev += fmt.Sprintf(" (%d %s)", c.Nodes, plural(c.Nodes, "node"))
	}
	comm := str(c.Exchange())
	if c.Transport != "" {
		comm += " over " + c.Transport
	}
	stages := star(c.Stages, "%d "+plural(c.Stages, "stage"))
	return fmt.Sprintf("%s, %s, %s, batch %s × %s, %s, %s, %s", c.System, dev, str(c.Precision),
		star(c.BatchPerDevice, "%d"), star(c.Accumulation, "%d"), stages, comm, str(c.Storage))
}

// Exchange names the configuration's gradient exchange as predict's
// tables do: "ring", or "hierarchical, double-tree between nodes"
// (scenarios.Parallelism.Exchange).
func (c Config) Exchange() string {
	return (&scenarios.Parallelism{AllReduce: c.AllReduce, InterNode: c.InterNode}).Exchange()
}

// Infeasible is a configuration, or a family of them (unset fields of
// Config), that cannot run, and why.
type Infeasible struct {
	Config Config
	Reason string // one of the Reason constants
	Detail string // the specifics
}

// Candidate is the configuration a plan keeps for one system and device
// count: the fastest it found there, predicted as predict predicts it.
type Candidate struct {
	Config Config
	// Row is the prediction; Row.Time equals what predict.Predict gives for
	// Scenario.
	Row predict.Row
	// Scenario is the equivalent scenario: loading it and predicting its
	// one configuration gives Row.
	Scenario scenarios.Scenario
	// Cost is the cost in the plan's basis: dollars or device-hours.
	Cost float64
	// Misses lists the targets the candidate misses, in words; empty when
	// it meets the deadline and every budget.
	Misses []string
	// Bottleneck says in words what limits the step.
	Bottleneck string
	// Pareto marks a candidate no other is both faster and cheaper than.
	Pareto bool
	// Compute is what the candidate's compute time comes from
	// (predict.SourceOf): a calibration of its device, or the operator
	// model or roofline from the device's datasheet.
	Compute predict.Source
}

// Calibrated reports whether the candidate's compute rests on a
// calibration of its device (Compute.Calibrated).
func (c *Candidate) Calibrated() bool { return c.Compute.Calibrated() }

// Meets reports whether the candidate meets the deadline and budget.
func (c *Candidate) Meets() bool { return len(c.Misses) == 0 }

// Result is the outcome of a plan.
type Result struct {
	// Request is the request with its defaults filled in.
	Request Request
	// Model is the model trained; Target the recipe's primary target and
	// its length in words.
	Model, Target string
	// CostBasis is "dollars" when every candidate system has a price,
	// else "device-hours"; CostNote says which systems lack one.
	CostBasis string
	CostNote  string
	// Candidates holds the kept configuration of each system and device
	// count, by time to target; Pareto those no other is both faster and
	// cheaper than, by time.
	Candidates []Candidate
	Pareto     []Candidate
	// Recommended is the cheapest Pareto candidate that meets the
	// deadline and budget, or nil when none does.
	Recommended *Candidate
	// Infeasible lists every configuration family that cannot run.
	Infeasible []Infeasible
	// Enumerated counts the feasible configurations of the space,
	// Simulated those the search simulated.
	Enumerated, Simulated int
	// Compute says, for each candidate system, how its compute is
	// modelled at each precision searched: from a calibration or from the
	// roofline.
	Compute []ComputeSource
}

// ComputeSource is how one system's compute is modelled at one precision.
type ComputeSource struct {
	System, Device, Precision string
	// Calibration is the measured law the precision computes by, with
	// its source; nil for the roofline.
	Calibration *scenarios.Calibration
	// Efficiency is the model's fraction of the device's peak FLOP/s that
	// the roofline assumes (model.Model.EffectiveEfficiency).
	Efficiency float64
	// Skipped is set for a precision the search left out: a calibration
	// covers others of the system's precisions, and the request did not
	// name precisions (Space.Precisions).
	Skipped bool
	// Operators is set where no calibration applies and package compute's
	// operator model covers the model on the device: the scenario computes
	// by operators, not by the roofline (scenarios.Resolved.OperatorCompute).
	Operators bool
	// HostMeasured is set where Operators is and a host table gave the
	// host's costs (Request.Scenario.Host, plan --host).
	HostMeasured bool
}

// String says where the compute comes from, such as "fp16: calibrated,
// v0 = 2180 samples/s on 1 device, t = 0 s (calib.yaml (bench.csv))" or
// "fp32: roofline, 0.35 of the fp32 peak".
func (c ComputeSource) String() string {
	if cal := c.Calibration; cal != nil {
		n := max(cal.Devices, 1)
		return fmt.Sprintf("%s: calibrated, v0 = %s samples/s on %d %s, t = %s (%s)",
			c.Precision, predict.Rate(cal.V0), n, plural(n, "device"), cal.T, cal.Source)
	}
	if c.Operators && c.HostMeasured {
		return fmt.Sprintf("%s: operator model of the device's datasheet, host measured", c.Precision)
	}
	if c.Operators {
		return fmt.Sprintf("%s: operator model of the device's datasheet", c.Precision)
	}
	return fmt.Sprintf("%s: roofline, %.2f of the %s peak", c.Precision, c.Efficiency, c.Precision)
}

// Search searches the request's space on every candidate system and returns
// the Pareto set of time to target against cost. On each system and
// device count it keeps the fastest configuration it finds: there the cost
// (device-hours, dollars, energy) is proportional to time, so only the
// fastest can be on the Pareto set. The search (docs/predict.md) starts
// from the compute configuration (precision, batch, accumulation, stages)
// with the smallest lower bound on time,
//
//	steps(B) · ((M + S − 1)·c(b)/S + u/S),   c(b) = b·PerSample + Fixed
//
// (the compute of a step with its pipeline bubble and update, no
// communication or input), improves the gradient exchange, transport and
// storage one at a time, then simulates the other compute configurations
// in order of their bound until the bound exceeds the best time found,
// and improves the communication once more. Configurations that cannot
// run are listed in Infeasible with their reason.
func Search(req Request) (*Result, error) {
	if req.Recipe == "" {
		return nil, errors.New("plan: no recipe")
	}
	if req.MaxDevices == 0 {
		req.MaxDevices = DefaultMaxDevices
	}
	if req.MaxDevices < 1 || req.MaxDevices > sim.MaxRanks {
		return nil, fmt.Errorf("plan: max devices %d is not in [1, %d]", req.MaxDevices, sim.MaxRanks)
	}
	if req.Deadline < 0 {
		return nil, fmt.Errorf("plan: deadline %v is negative", req.Deadline)
	}
	if err := req.Space.check(); err != nil {
		return nil, err
	}
	// A value given twice would be searched twice and its candidates
	// listed twice.
	req.Systems = unique(req.Systems)
	sp := &req.Space
	sp.Devices, sp.Batches, sp.Accumulation, sp.Stages = unique(sp.Devices), unique(sp.Batches), unique(sp.Accumulation), unique(sp.Stages)
	sp.AllReduce, sp.Transports, sp.Storage, sp.Precisions = unique(sp.AllReduce), unique(sp.Transports), unique(sp.Storage), unique(sp.Precisions)
	sp.InterNode = unique(sp.InterNode)
	if req.Decode == "" {
		req.Decode = "host"
	}
	if !slices.Contains(scenarios.DecodeSites, req.Decode) {
		return nil, fmt.Errorf("plan: %s", unknown("decode site", req.Decode, scenarios.DecodeSites))
	}
	// Check the request's names here, so that an unknown one is named as
	// the request gave it rather than as a line of the scenario each
	// system's search is built on.
	prof, err := model.LoadWith(req.Scenario.ProfilePaths, nil)
	if err != nil {
		return nil, err
	}
	rcp, err := prof.Recipe(req.Recipe)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if req.Model != "" {
		m, err := prof.Model(req.Model)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		if m.Name != rcp.Model {
			return nil, fmt.Errorf("plan: model %q: recipe %q trains %q", m.Name, rcp.Name, rcp.Model)
		}
	}
	cat, err := hw.LoadWith(req.Scenario.CatalogPaths, nil)
	if err != nil {
		return nil, err
	}
	for _, s := range req.Systems {
		if _, err := cat.System(s); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	if len(req.Systems) == 0 {
		for _, s := range cat.SystemNames() {
			if s != "localhost" {
				req.Systems = append(req.Systems, s)
			}
		}
	}
	cals, err := scenarios.ReadCalibrationFiles(req.Calibrations)
	if err != nil {
		return nil, fmt.Errorf("plan: calibration: %w", err)
	}
	used := make([]bool, len(cals))
	res := &Result{Request: req}
	var groups []*group
	var priced, unpriced []string
	for _, name := range req.Systems {
		base, err := baseScenario(name, req)
		if err != nil {
			return nil, err
		}
		if res.Target == "" {
			res.Model = base.Mdl.Name
			rc := base.Rcp
			res.Target = fmt.Sprintf("%s to %s (%s)", base.Mdl.Name, predict.RiskOf(rc, 0, 0).TargetText(), predict.StepsModel{Recipe: rc, Curve: base.StepsToTarget, TrainSamples: int(base.Data.TrainSamples)})
		}
		if base.Sys.PricePerDeviceHour > 0 {
			priced = append(priced, name)
		} else {
			unpriced = append(unpriced, name)
		}
		base.Fabric = scenarios.FabricFiles(cals, base.Sys.Name)
		for i, f := range cals {
			if slices.ContainsFunc(base.Fabric, func(g scenarios.CalibrationFile) bool { return g.Path == f.Path }) {
				used[i] = true
			}
		}
		precs := precisions(base, req.Space)
		byPrec, srcs, err := calibrationsFor(base, precs, cals, used)
		if err != nil {
			return nil, err
		}
		if len(byPrec) > 0 && req.Space.Precisions == nil {
			// Measured compute at one precision and the roofline's
			// assumption at another are not comparable: the roofline is
			// optimistic on tensor cores, and would win by assumption.
			precs = slices.DeleteFunc(precs, func(p string) bool { return byPrec[p] == nil })
			for i := range srcs {
				srcs[i].Skipped = byPrec[srcs[i].Precision] == nil
			}
		}
		res.Compute = append(res.Compute, srcs...)
		g, inf := enumerate(base, req, precs, byPrec)
		res.Infeasible = append(res.Infeasible, inf...)
		groups = append(groups, g...)
	}
	for i, ok := range used {
		// The published figures built in are no file the user wrote: where
		// none applies, every system computes by its roofline, as the
		// compute table says system by system.
		if !ok && cals[i].Path != scenarios.Published {
			return nil, fmt.Errorf("plan: calibration %s: %s", cals[i].Path, mismatch(cals[i], res.Model, res.Compute))
		}
	}
	res.CostBasis = "dollars"
	res.CostNote = "cost = device-hours × the catalogue's price per device-hour"
	if len(unpriced) > 0 {
		res.CostBasis = "device-hours"
		res.CostNote = "cost is device-hours: the catalogue has no price for " + strings.Join(unpriced, ", ")
		if len(priced) > 0 {
			res.CostNote += "; dollars are shown where it has one"
		}
	}

	// Search the groups in parallel; each is independent.
	var wg sync.WaitGroup
	work := make(chan *group)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				g.search(req.Predict)
			}
		}()
	}
	for _, g := range groups {
		work <- g
	}
	close(work)
	wg.Wait()

	for _, g := range groups {
		res.Enumerated += len(g.computes) * g.comms()
		res.Simulated += g.simulated
		res.Infeasible = append(res.Infeasible, g.infeasible...)
		if g.best == nil {
			continue
		}
		c := *g.best
		c.Cost = c.Row.DeviceHours
		if res.CostBasis == "dollars" {
			c.Cost = c.Row.Cost
		}
		c.Misses = misses(&c, req)
		res.Candidates = append(res.Candidates, c)
	}
	slices.SortStableFunc(res.Candidates, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Row.Time, b.Row.Time), cmp.Compare(a.Cost, b.Cost))
	})
	minCost := math.Inf(1)
	for i := range res.Candidates {
		c := &res.Candidates[i]
		if c.Cost < minCost {
			c.Pareto = true
			minCost = c.Cost
			res.Pareto = append(res.Pareto, *c)
		}
	}
	for i := range res.Pareto {
		c := &res.Pareto[i]
		if c.Meets() && (res.Recommended == nil || c.Cost < res.Recommended.Cost) {
			res.Recommended = c
		}
	}
	return res, nil
}

// unique returns s without the values it has already had, in order; nil
// for nil.
func unique[T comparable](s []T) []T {
	if s == nil {
		return nil
	}
	seen := make(map[T]bool, len(s))
	out := make([]T, 0, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// check reports a search space value no scenario can take.
func (s *Space) check() error {
	for _, l := range []struct {
		name string
		v    []int
	}{{"devices", s.Devices}, {"batch", s.Batches}, {"accumulation", s.Accumulation}, {"stages", s.Stages}} {
		for _, n := range l.v {
			if n < 1 || n > sim.MaxRanks {
				return fmt.Errorf("plan: %s %d is not in [1, %d]", l.name, n, sim.MaxRanks)
			}
		}
	}
	for _, a := range s.AllReduce {
		if !slices.Contains(scenarios.AllReduceAlgorithms, a) {
			return fmt.Errorf("plan: %s", unknown("all-reduce algorithm", a, scenarios.AllReduceAlgorithms))
		}
	}
	for _, a := range s.InterNode {
		if !slices.Contains(scenarios.InterNodeAlgorithms, a) {
			return fmt.Errorf("plan: %s", unknown("all-reduce between nodes", a, scenarios.InterNodeAlgorithms))
		}
	}
	for _, st := range s.Storage {
		if !slices.Contains(Storages, st) {
			return fmt.Errorf("plan: %s", unknown("storage", st, Storages))
		}
	}
	for _, p := range s.Precisions {
		if !slices.Contains(scenarios.Precisions, p) {
			return fmt.Errorf("plan: %s", unknown("precision", p, scenarios.Precisions))
		}
	}
	return nil
}

// baseScenario resolves the recipe on a system: the scenario every
// configuration of that system is a copy of.
func baseScenario(system string, req Request) (*scenarios.Resolved, error) {
	src := fmt.Sprintf("name: plan-%s\nsystem: %q\nrecipe: %q\nsweep: {devices: [1], batch: [1]}\ninput: {storage: local, decode: %q}\nparallelism: {pipeline_stages: 1, accumulation: 1}\n", system, system, req.Recipe, req.Decode)
	if req.Model != "" {
		src += fmt.Sprintf("model: %q\n", req.Model)
	}
	if req.StepsToTarget != "" {
		src += fmt.Sprintf("steps_to_target: {file: %q}\n", req.StepsToTarget)
	}
	r, err := scenarios.Parse(strings.NewReader(src), "plan", req.Scenario)
	if err != nil {
		return nil, fmt.Errorf("plan: system %s: %w", system, err)
	}
	return r, nil
}

// computeCfg is the compute part of a configuration.
type computeCfg struct {
	prec    string
	b, m, s int
	lb      float64 // lower bound on the time to target, seconds
}

// order is the key the search tries compute configurations by: the
// lower bound, raised a little for pipeline stages and accumulation so
// that among configurations with about the same bound the simpler one is
// tried first (and, being first, kept on a tie).
func (c computeCfg) order() float64 {
	return c.lb * (1 + 0.01*float64(c.s-1) + 0.005*float64(c.m-1))
}

// commCfg is the communication and input part of a configuration.
type commCfg struct {
	alg, inter, transport, storage string // inter: hierarchical's between nodes, else ""
}

// exchange is a gradient exchange: an all-reduce and, for hierarchical
// on several nodes, the all-reduce between the nodes.
type exchange struct{ alg, inter string }

// group is the configurations of one system and device count.
type group struct {
	base    *scenarios.Resolved
	cals    map[string]*scenarios.Calibration // by precision; absent: the roofline
	devices int
	nodes   int
	per     int

	computes   []computeCfg
	exchanges  []exchange // exchangesOf the search space's
	transports []string
	storages   []string

	infeasible []Infeasible
	simulated  int
	best       *Candidate
}

// comms returns the number of communication configurations.
func (g *group) comms() int { return len(g.exchanges) * len(g.transports) * len(g.storages) }

// exchangesOf lists the exchanges of all-reduces algs between the devices
// of nodes nodes, per on each: each of algs, and hierarchical once per
// inters when there are several nodes of several devices (on one node, or
// one device a node, hierarchical has no separate exchange between nodes).
func exchangesOf(algs, inters []string, nodes, per int) []exchange {
	var out []exchange
	for _, a := range algs {
		if a != "hierarchical" || nodes < 2 || per < 2 {
			out = append(out, exchange{alg: a})
			continue
		}
		for _, in := range inters {
			out = append(out, exchange{alg: a, inter: in})
		}
	}
	return out
}

// enumerate returns the groups of a system, searched at the precisions
// precs and computing by cals where it has one for the precision, and the
// configuration families that cannot run on it.
func enumerate(base *scenarios.Resolved, req Request, precs []string, cals map[string]*scenarios.Calibration) ([]*group, []Infeasible) {
	var inf []Infeasible
	sys, node, dev, rc := base.Sys, base.Node, base.Device, base.Rcp
	add := func(c Config, reason, format string, args ...any) {
		c.System = sys.Name
		inf = append(inf, Infeasible{Config: c, Reason: reason, Detail: fmt.Sprintf(format, args...)})
	}
	sp := req.Space

	// Device counts.
	devices := sp.Devices
	if devices == nil {
		devices = []int{1}
		for k := 1; k*node.Devices <= req.MaxDevices; k *= 2 {
			if k*node.Devices != 1 {
				devices = append(devices, k*node.Devices)
			}
		}
	}
	for _, p := range sp.Precisions {
		if !slices.Contains(precs, p) {
			add(Config{Precision: p}, ReasonPrecision, "device %s has no %s peak", dev.Name, p)
		}
	}
	batches := sp.Batches
	if batches == nil {
		b := int(rc.PerDeviceBatch)
		batches = []int{2 * b}
		for _, d := range []int{1, 2, 4, 8} {
			if v := max(b/d, 1); !slices.Contains(batches, v) {
				batches = append(batches, v)
			}
		}
	}
	accs := sp.Accumulation
	if accs == nil {
		accs = []int{1, 2, 4}
		if a := max(rc.GradientAccumulation, 1); !slices.Contains(accs, a) {
			accs = append(accs, a)
		}
	}
	stages := sp.Stages
	if stages == nil {
		stages = []int{1, 2, 4}
		if s := max(rc.PipelineStages, 1); !slices.Contains(stages, s) {
			stages = append(stages, s)
		}
	}
	algs := sp.AllReduce
	if algs == nil {
		algs = []string{"ring", "halving-doubling", "double-tree", "hierarchical"}
		if sys.Fabric.Kind == hw.IPULinkNet {
			algs = append(algs, "torus-2d")
		}
	}
	inters := sp.InterNode
	if len(inters) == 0 {
		inters = []string{"ring", "double-tree"}
	}
	// Transports between nodes.
	var transports []string
	if sp.Transports == nil {
		for _, name := range sortedTransports(sys) {
			if t, err := sys.Transport(name); err == nil && t.BetweenNodes() {
				transports = append(transports, name)
			}
		}
	} else {
		for _, name := range sp.Transports {
			t, err := sys.Transport(name)
			switch {
			case err != nil:
				add(Config{Transport: name}, ReasonTransport, "%v", err)
			case !t.BetweenNodes():
				add(Config{Transport: name}, ReasonTransport, "transport %q of system %q works only inside a node (scope %s)", name, sys.Name, t.Scope)
			default:
				transports = append(transports, name)
			}
		}
	}
	// Storage.
	storages := sp.Storage
	if storages == nil {
		storages = []string{"local"}
		if sys.SharedStorage != nil {
			storages = []string{"staged", "shared"}
		}
	}
	var stores []string
	for _, st := range storages {
		rc := *base
		setStorage(&rc.Scenario, st)
		if len(precs) > 0 {
			// At a precision the device has: the recipe's may not be
			// one (fp16 on a CPU), and this checks the storage alone.
			rc.Scenario.Precision, rc.Scenario.Calibration = precs[0], nil
		}
		if st != "local" && sys.SharedStorage == nil {
			add(Config{Storage: st}, ReasonStorage, "system %q has no shared storage", sys.Name)
			continue
		}
		if _, err := rc.Build(rc.Points()[0]); err != nil {
			add(Config{Storage: st}, ReasonStorage, "%v", err)
			continue
		}
		stores = append(stores, st)
	}

	var groups []*group
	for _, n := range devices {
		per := min(node.Devices, n)
		nodes := n / per
		c := Config{Devices: n}
		if n%per != 0 {
			add(c, ReasonShape, "%d devices do not fill whole nodes of %d", n, node.Devices)
			continue
		}
		c.Nodes = nodes
		if nodes > sys.MaxNodes {
			add(c, ReasonNodes, "%d devices need %d nodes of %d; system %q has %d", n, nodes, per, sys.Name, sys.MaxNodes)
			continue
		}
		if n > req.MaxDevices {
			add(c, ReasonMaxDevices, "%d devices are more than the %d the search may use", n, req.MaxDevices)
			continue
		}
		if len(stores) == 0 {
			continue // every storage option is listed as infeasible
		}
		if nodes > 1 && len(transports) == 0 {
			add(c, ReasonTransport, "system %q has no transport between nodes in the search space", sys.Name)
			continue
		}
		g := &group{base: base, cals: cals, devices: n, nodes: nodes, per: per, exchanges: exchangesOf(algs, inters, nodes, per), storages: stores}
		g.transports = []string{""}
		if nodes > 1 {
			g.transports = transports
		}
		if n == 1 {
			g.exchanges = []exchange{{alg: base.Parallelism.AllReduce}}
		}
		for _, s := range stages {
			if n%s != 0 || s > n {
				add(Config{Devices: n, Nodes: nodes, Stages: s}, ReasonShape, "%d devices do not divide into %d pipeline stages", n, s)
				continue
			}
			for _, m := range accs {
				for _, b := range batches {
					B := b * (n / s) * m
					cc := Config{Devices: n, Nodes: nodes, Stages: s, Accumulation: m, BatchPerDevice: b, GlobalBatch: B}
					if predict.RiskOf(rc, 0, B).PastDataSet() {
						// Whatever the recipe's limit, or none known:
						// an epoch would be less than one step.
						ds := base.Data
						add(cc, ReasonDataset, "global batch %s > the %s %ss of %s's training set", predict.Group(int64(B)), predict.Group(rc.TrainSamples()), ds.SampleUnit, ds.Name)
						continue
					}
					if limit := g.limit(); limit > 0 && B > limit {
						add(cc, ReasonBatch, "global batch %s > %s, the largest recipe %s is known to reach its target with", predict.Group(int64(B)), predict.Group(int64(limit)), rc.Name)
						continue
					}
					for _, p := range precs {
						cp := computeCfg{prec: p, b: b, m: m, s: s}
						r := g.resolved(cp, g.defaultComm())
						cfg, err := r.Build(r.Points()[0])
						cc.Precision = p
						if err != nil {
							add(cc, ReasonSimulate, "%v", err)
							continue
						}
						if fp, _ := cfg.PeakFootprint(); cfg.Memory.Capacity > 0 && fp.Total() > cfg.Memory.Capacity {
							add(cc, ReasonMemory, "needs %.1f GiB per device; %s has %.1f GiB", float64(fp.Total()/units.GiB), dev.Name, float64(cfg.Memory.Capacity/units.GiB))
							continue
						}
						cp.lb = lowerBound(&cfg, predict.StepsModel{Recipe: rc, Curve: base.StepsToTarget}.Steps(B))
						g.computes = append(g.computes, cp)
					}
				}
			}
		}
		if len(g.computes) > 0 && len(g.exchanges) > 0 && len(g.transports) > 0 && len(g.storages) > 0 {
			slices.SortStableFunc(g.computes, func(a, b computeCfg) int { return cmp.Compare(a.order(), b.order()) })
			groups = append(groups, g)
		}
	}
	return groups, inf
}

// sortedTransports returns the system's transports with verbs first, then
// by efficiency.
func sortedTransports(sys *hw.System) []string {
	names := make([]string, 0, len(sys.Transports))
	for n := range sys.Transports {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(-cmp.Compare(sys.Transports[a].Efficiency, sys.Transports[b].Efficiency), cmp.Compare(a, b))
	})
	return names
}

// lowerBound bounds the time to target of cfg from below: a step takes
// at least its compute with the pipeline bubble of equal stages and free
// transfers, and at least the time its slowest input stage needs to
// prepare a node's share of the global batch B (the input overlaps
// compute, so the larger of the two counts):
//
//	steps · max((M + S − 1)·c(b)/S + u/S, (B/nodes)/rate)
func lowerBound(cfg *sim.Config, steps int) float64 {
	S, M := float64(max(cfg.Stages, 1)), float64(max(cfg.Accumulation, 1))
	c := float64(cfg.MicroBatch)*float64(cfg.Compute.PerSample) + float64(cfg.Compute.Fixed)
	step := (M+S-1)*c/S + float64(cfg.Compute.Update)/S
	if st := inputStages(cfg); len(st) > 0 {
		rate := slices.MinFunc(st, func(a, b inputStage) int { return cmp.Compare(a.rate, b.rate) }).rate
		step = max(step, float64(cfg.GlobalBatch())/float64(cfg.Nodes)/rate)
	}
	return float64(steps) * step
}

// limit returns the largest global batch known to reach the target.
func (g *group) limit() int {
	return predict.StepsModel{Recipe: g.base.Rcp, Curve: g.base.StepsToTarget}.Limit()
}

// defaultComm is where the search starts: hierarchical between nodes of
// several devices, with the first of the all-reduces between nodes, else
// the first exchange; the system's most efficient transport; the first
// storage.
func (g *group) defaultComm() commCfg {
	e := g.exchanges[0]
	if i := slices.IndexFunc(g.exchanges, func(e exchange) bool { return e.inter != "" }); i >= 0 {
		e = g.exchanges[i]
	}
	return commCfg{alg: e.alg, inter: e.inter, transport: g.transports[0], storage: g.storages[0]}
}

// setStorage sets a scenario's input for a plan storage option.
func setStorage(s *scenarios.Scenario, st string) {
	s.Input.Staging = st == "staged"
	s.Input.Storage = st
	if st == "staged" {
		s.Input.Storage = "local"
	}
}

// resolved returns a copy of the group's base scenario set to one
// configuration, with every default filled in as scenarios.Load would.
func (g *group) resolved(c computeCfg, k commCfg) *scenarios.Resolved {
	r := *g.base
	s := &r.Scenario
	s.Name = fmt.Sprintf("plan-%s-%d", r.Sys.Name, g.devices)
	s.Precision = c.prec
	s.Calibration = nil
	if cal := g.cals[c.prec]; cal != nil {
		cc := *cal
		s.Calibration = &cc
	}
	s.BatchPerDevice = c.b
	s.Parallelism.PipelineStages = c.s
	s.Parallelism.Accumulation = c.m
	s.Parallelism.DevicesPerNode = r.Node.Devices
	s.Parallelism.AllReduce, s.Parallelism.InterNode = k.alg, k.inter
	if k.inter == "" {
		s.Parallelism.InterNode = "ring" // the default, which every exchange takes
	}
	if k.transport != "" {
		s.Parallelism.Transport = k.transport
	}
	setStorage(s, k.storage)
	s.Sweep = scenarios.Sweep{Devices: []int{g.devices}, Batch: []int{c.b}}
	return &r
}

// search finds the group's fastest configuration and predicts it.
//
// A configuration replaces the best one only when it is faster by more
// than Tie, so that near-ties keep the configuration found first: the
// lower compute bound and the default communication.
func (g *group) search(opt predict.Options) {
	type key struct {
		c int
		k commCfg
	}
	type found struct {
		t                  float64
		comm, input, total float64 // shares of the step, seconds
	}
	seen := map[key]found{}
	best := found{t: math.Inf(1)}
	var bestC int
	var bestK commCfg
	try := func(ci int, k commCfg) {
		if _, ok := seen[key{ci, k}]; ok {
			return
		}
		g.simulated++
		r := g.resolved(g.computes[ci], k)
		row, err := predict.Evaluate(r, r.Points()[0], predict.Options{Steps: ScreenSteps})
		f := found{t: math.Inf(1)}
		if err == nil && row.Err == nil {
			b := row.Result.Breakdown
			f = found{t: float64(row.Time), comm: float64(b.Comm), input: float64(b.Input), total: float64(row.Result.StepTime)}
		} else {
			if err == nil {
				err = row.Err
			}
			g.infeasible = append(g.infeasible, Infeasible{Config: g.config(g.computes[ci], k), Reason: ReasonSimulate, Detail: err.Error()})
		}
		seen[key{ci, k}] = f
		if f.t < best.t*(1-Tie) {
			best, bestC, bestK = f, ci, k
		}
	}
	// descend tries every value of each communication dimension in turn
	// for compute configuration ci, keeping the best; a dimension whose
	// whole share of the step (exposed communication for the exchange and
	// transport, input wait for the storage) is below Tie cannot gain more
	// than Tie and is left alone.
	descend := func(ci int) {
		for dim := range 3 {
			share := best.comm
			if dim == 2 {
				share = best.input
			}
			if share <= Tie*best.total {
				continue
			}
			base := bestK
			n := []int{len(g.exchanges), len(g.transports), len(g.storages)}[dim]
			for i := range n {
				k := base
				switch dim {
				case 0:
					k.alg, k.inter = g.exchanges[i].alg, g.exchanges[i].inter
				case 1:
					k.transport = g.transports[i]
				case 2:
					k.storage = g.storages[i]
				}
				try(ci, k)
			}
		}
	}
	bestK = g.defaultComm()
	try(0, bestK)
	if math.IsInf(best.t, 1) {
		return
	}
	descend(0)
	first := bestC
	for ci := 1; ci < len(g.computes); ci++ {
		if g.computes[ci].lb < best.t*(1-Tie) {
			try(ci, bestK)
		}
	}
	if bestC != first {
		descend(bestC)
	}
	r := g.resolved(g.computes[bestC], bestK)
	row, err := predict.Evaluate(r, r.Points()[0], opt)
	if err != nil {
		return
	}
	if row.Err != nil {
		g.infeasible = append(g.infeasible, Infeasible{Config: g.config(g.computes[bestC], bestK), Reason: ReasonSimulate, Detail: row.Err.Error()})
		return
	}
	sc := r.Scenario
	sc.Catalog, sc.Profiles = nil, nil
	g.best = &Candidate{Config: g.config(g.computes[bestC], bestK), Row: row, Scenario: sc, Bottleneck: Bottleneck(r, row),
		Compute: predict.SourceOf(r)}
}

// config describes a configuration of the group.
func (g *group) config(c computeCfg, k commCfg) Config {
	return Config{System: g.base.Sys.Name, Devices: g.devices, Nodes: g.nodes, BatchPerDevice: c.b, Accumulation: c.m, Stages: c.s,
		GlobalBatch: c.b * (g.devices / c.s) * c.m, Precision: c.prec, AllReduce: k.alg, InterNode: k.inter, Transport: k.transport, Storage: k.storage}
}

// above formats v, which is over limit, with prec decimals (as the plan's
// tables print it) or as many more as it takes not to read as limit:
// 5.04 kWh over a 5 kWh budget is "5.04", not "5.0".
func above(v, limit float64, prec int) string {
	for ; prec < 6; prec++ {
		if s := strconv.FormatFloat(v, 'f', prec, 64); s != strconv.FormatFloat(limit, 'f', prec, 64) {
			return s
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// misses lists the targets c misses.
func misses(c *Candidate, req Request) []string {
	var out []string
	row := &c.Row
	if d := req.Deadline; d > 0 && row.Time > d {
		out = append(out, "misses the "+predict.Duration(d)+" deadline by "+predict.Duration(row.Time-d))
	}
	b := req.Budget
	if b.DeviceHours > 0 && row.DeviceHours > b.DeviceHours {
		out = append(out, fmt.Sprintf("%s device-hours, over the %g budget", above(row.DeviceHours, b.DeviceHours, 1), b.DeviceHours))
	}
	if b.Dollars > 0 {
		switch {
		case row.Cost == 0:
			out = append(out, "cost unknown: no price for "+c.Config.System)
		case row.Cost > b.Dollars:
			out = append(out, fmt.Sprintf("$%s, over the $%g budget", above(row.Cost, b.Dollars, 2), b.Dollars))
		}
	}
	if b.KWh > 0 {
		switch {
		case row.Energy == 0:
			out = append(out, "energy unknown: no power figure for "+c.Config.System)
		case row.Energy > b.KWh:
			out = append(out, fmt.Sprintf("%s kWh, over the %g kWh budget", above(row.Energy, b.KWh, 1), b.KWh))
		}
	}
	return out
}

// Bottleneck says in words what limits the step of a predicted row of r:
// "compute-bound: 97% of the step computes (fp16 on a100-sxm4-80gb)",
// "communication-bound: 41% of the step is exposed all-reduce
// (halving-doubling) over IPoIB", "input-bound: 38% of the step waits for
// input; the slowest input stage is decoding on 40 cores (7,040 samples/s
// per node)", a pipeline bubble or a straggler wait.
func Bottleneck(r *scenarios.Resolved, row predict.Row) string {
	if !row.OK() {
		return "-"
	}
	res := row.Result
	b := res.Breakdown
	total := float64(res.StepTime)
	if !(total > 0) {
		return "-"
	}
	pct := func(x units.Seconds) string { return strconv.FormatFloat(100*float64(x)/total, 'f', 0, 64) + "%" }
	type part struct {
		v    units.Seconds
		text string
	}
	parts := []part{
		{b.Comm, ""}, {b.Input, ""}, {b.Bubble, ""}, {b.Straggler, ""},
	}
	top := 0
	for i := range parts {
		if parts[i].v > parts[top].v {
			top = i
		}
	}
	if float64(b.Compute) >= 0.8*total || parts[top].v <= 0 {
		return fmt.Sprintf("compute-bound: %s of the step computes (%s on %s)", pct(b.Compute), r.Precision, r.Device.Name)
	}
	switch top {
	case 0:
		over := "inside the node"
		if row.Point.Nodes > 1 {
			over = "over " + transportName(r.Parallelism.Transport)
		}
		return fmt.Sprintf("communication-bound: %s of the step is exposed all-reduce (%s) %s", pct(b.Comm), r.Parallelism.Exchange(), over)
	case 1:
		s := fmt.Sprintf("input-bound: %s of the step waits for input", pct(b.Input))
		if cfg, err := r.Build(row.Point); err == nil {
			if stage := slowestInput(&cfg); stage != "" {
				s += "; the slowest input stage is " + stage
			}
		}
		return s
	case 2:
		S, M := r.Parallelism.PipelineStages, r.Parallelism.Accumulation
		return fmt.Sprintf("pipeline bubble: %s of the step (%d %s, %d %s per step)", pct(b.Bubble), S, plural(S, "stage"), M, plural(M, "micro-batch"))
	}
	return fmt.Sprintf("straggler-bound: %s of the step waits for the slowest replica", pct(b.Straggler))
}

// transportName spells a transport as people write it.
func transportName(t string) string {
	switch t {
	case hw.IPoIB:
		return "IPoIB"
	case hw.TCP:
		return "TCP"
	case hw.TCPXO:
		return "GPUDirect-TCPXO"
	case hw.GRPC:
		return "gRPC"
	case hw.NCCL:
		return "NCCL"
	case hw.GCL:
		return "GCL"
	}
	return t
}

// inputStage is one stage of the input pipeline and its rate per node.
type inputStage struct {
	rate float64 // samples/s per node
	what string
}

// inputStages returns the rate of each stage of c's input pipeline per
// node, from the configuration's figures: reading (local drives, the
// shared file server's per-client and shared aggregate bandwidth, or the
// shared database file's serialized reads), decoding on the node's cores,
// and copying to the devices. Synthetic input has none.
func inputStages(c *sim.Config) []inputStage {
	in := &c.Input
	if in.Storage == sim.Synthetic {
		return nil
	}
	var st []inputStage
	nodes := float64(max(c.Nodes, 1))
	if in.SampleBytes > 0 {
		switch in.Storage {
		case sim.Local:
			// The page cache serves CacheHit of the reads; the drives
			// the rest.
			if miss := 1 - in.CacheHit; in.Local > 0 && miss > 0 {
				st = append(st, inputStage{float64(in.Local) / (float64(in.SampleBytes) * miss), "reading the node's drives"})
			}
		case sim.Shared:
			bw := math.Min(float64(in.Shared.PerClient), float64(in.Shared.Aggregate)/nodes)
			if bw > 0 {
				st = append(st, inputStage{bw / float64(in.SampleBytes), "reading the shared file server"})
			}
		case sim.SharedDB:
			if hold := float64(in.DB.Service) + float64(in.DB.PerReader)*(nodes-1); hold > 0 {
				st = append(st, inputStage{1 / hold / nodes, "reading the shared database file, whose readers take turns"})
			}
		}
	}
	if p := in.DecodeParallelism(); in.Decode > 0 && p > 0 {
		where := fmt.Sprintf("decoding on %d cores", in.Cores)
		if p != float64(in.Cores) {
			where = fmt.Sprintf("decoding on %d workers (%.4g cores' worth)", in.Workers, p)
		}
		st = append(st, inputStage{p / float64(in.Decode), where})
	}
	if in.Copy > 0 && in.HostToDevice > 0 {
		st = append(st, inputStage{float64(in.HostToDevice) / float64(in.Copy) * float64(c.DevicesPerNode), "copying to the devices"})
	}
	return st
}

// slowestInput names the input stage with the lowest rate per node.
func slowestInput(c *sim.Config) string {
	st := inputStages(c)
	if len(st) == 0 {
		return ""
	}
	low := slices.MinFunc(st, func(a, b inputStage) int { return cmp.Compare(a.rate, b.rate) })
	return fmt.Sprintf("%s (%s samples/s per node)", low.what, predict.Group(int64(math.Round(low.rate))))
}

func unknown(kind, name string, valid []string) string { return config.Unknown(kind, name, valid) }

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
