package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"scaleplan/compute"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/sim"
)

//go:embed shipped/*.yaml
var shipped embed.FS

// Scenario is one experiment: a model trained with a recipe on a system,
// with a parallelism, an input pipeline and a sweep of sizes. It is the YAML
// form; Load resolves it against the catalogue and the profiles.
type Scenario struct {
	Name        string `yaml:"name"`        // identifier; required
	Description string `yaml:"description"` // one line; default ""
	Source      string `yaml:"source"`      // where the experiment comes from; default ""

	System string `yaml:"system"` // catalogue system; required
	Model  string `yaml:"model"`  // profile model; default the recipe's
	Recipe string `yaml:"recipe"` // training recipe; required

	// Framework is a label for the software that ran the experiment
	// (caffe2, tensorflow, chainermn, pytorch, mxnet, poplar); default "".
	// Where a model's programs differ, it picks the one whose operators
	// the operator model lists (compute.Config.Framework: tensorflow runs
	// Mask R-CNN's TensorFlow 2 program).
	Framework string `yaml:"framework"`

	// Mode is how the framework issued the step's kernels, which sets the
	// host's cost per kernel of the operator model (compute.Mode): eager,
	// cuda-graphs or compiled. Default the framework's
	// (compute.FrameworkMode: compiled for mxnet and tensorflow, eager
	// otherwise).
	Mode compute.Mode `yaml:"mode"`

	// Fuse names the kernels the program fuses beyond the framework's
	// defaults: FuseBNReLU, each batch norm run with the ReLU after it and
	// a residual block's last norm with the add and ReLU (MXNet's
	// --fuse-bn-relu 1 --fuse-bn-add-relu 1, which NVIDIA's MLPerf
	// ResNet-50 runs pass; NVIDIA's MXNet SSD by default), for resnet50
	// and ssd-resnet34, whose operator lists fuse them in their residual
	// blocks (model.Shape.FuseBNReLU). Default "": none.
	Fuse string `yaml:"fuse"`

	// Precision of compute and gradients: fp32, tf32, fp16 or bf16 (the
	// last two mixed precision). Default the recipe's.
	Precision string `yaml:"precision"`

	// BatchPerDevice is the micro-batch per device, in samples. Default the
	// recipe's per-device batch. Sweep.Batch overrides it.
	BatchPerDevice int `yaml:"batch_per_device"`

	Parallelism Parallelism `yaml:"parallelism"`
	Input       Input       `yaml:"input"`
	Sweep       Sweep       `yaml:"sweep"`

	// Calibration replaces the roofline compute model with measured ideal
	// throughput and cost time. Default nil (roofline).
	Calibration *Calibration `yaml:"calibration"`

	// StepsToTarget replaces the recipe's epochs or iterations with a
	// fitted steps-to-target curve. Default nil (the recipe's).
	StepsToTarget *StepsToTarget `yaml:"steps_to_target"`

	Stragglers Stragglers `yaml:"stragglers"`
	Overheads  Overheads  `yaml:"overheads"`

	// TimedRegion replaces the recipe's timed_region (model.TimedRegion):
	// the evaluation cadence of the round's rules and the evaluation and
	// start-up costs of the submission's code, where the scenario's round
	// or code differs from the recipe's. Default nil (the recipe's).
	TimedRegion *model.TimedRegion `yaml:"timed_region"`

	// Seed seeds every random choice of a simulation; default 1.
	Seed uint64 `yaml:"seed"`

	// Catalog holds inline hardware entries in the catalogue's own schema
	// (devices, nodes, systems); they add to or override the catalogue for
	// this scenario only. Default nil.
	Catalog *hw.Catalog `yaml:"catalog"`

	// Profiles holds inline datasets, models and recipes in the profiles'
	// own schema; they add to or override the profiles for this scenario
	// only. Default nil.
	Profiles *model.Document `yaml:"profiles"`
}

// Parallelism says how the devices share the work.
type Parallelism struct {
	// DevicesPerNode is how many devices of each node are used. Default
	// all of the node's devices (fewer when the sweep's size is smaller).
	DevicesPerNode int `yaml:"devices_per_node"`

	// Placement is the number of devices used on each node when they
	// differ, such as [1, 2, 3, 4]: node i holds the next Placement[i]
	// devices in rank order, each 1 to the node's devices, at most the
	// system's max_nodes entries. It replaces devices_per_node, and
	// sweep.devices must then be its sum alone. Default none.
	Placement []int `yaml:"placement"`

	// PipelineStages is the number of devices one replica is pipelined
	// over. Default the recipe's, else 1.
	PipelineStages int `yaml:"pipeline_stages"`

	// Accumulation is the number of micro-batches per optimizer step.
	// Default the recipe's, else 1.
	Accumulation int `yaml:"accumulation"`

	// Schedule is the pipeline schedule: gpipe or 1f1b. Default 1f1b.
	Schedule string `yaml:"schedule"`

	// Recompute recomputes activations in the backward pass instead of
	// storing them. Default false.
	Recompute bool `yaml:"recompute"`

	// AllReduce is the gradient exchange: one of AllReduceAlgorithms.
	// Default nccl on NVIDIA GPUs of a system with an nccl transport (NCCL's
	// choice of algorithm and protocol per call, as PyTorch DDP, Horovod
	// and the frameworks' own NCCL backends run it), else ring.
	AllReduce string `yaml:"allreduce"`

	// InterNode is hierarchical's all-reduce between nodes, among the
	// devices with the same place in their nodes: one of
	// InterNodeAlgorithms. Default ring. NCCL's tree algorithm, a chain
	// inside each node and a double binary tree between nodes, is nearest
	// to hierarchical with double-tree.
	InterNode string `yaml:"inter_node"`

	// NCCLAlgo and NCCLProto fix the nccl exchange's algorithm (one of
	// NCCLAlgorithms) and protocol (one of NCCLProtocols), as NCCL_ALGO and
	// NCCL_PROTO do. Default "": NCCL's tuning model chooses per call.
	NCCLAlgo  string `yaml:"nccl_algo"`
	NCCLProto string `yaml:"nccl_proto"`

	// NCCLP2PDisable is NCCL_P2P_DISABLE=1: NCCL leaves its peer-to-peer
	// transport, NVLink included, and the devices of a node exchange
	// through host memory with its shared-memory transport, at the
	// node's hw.Node.SHMRate per device. Default false.
	NCCLP2PDisable bool `yaml:"nccl_p2p_disable"`

	// PSShards is the number of parameter-server shards (ps and async-ps).
	// Default 1.
	PSShards int `yaml:"ps_shards"`

	// Transport carries traffic between nodes: a transport of the system
	// (verbs, ipoib, tcp, grpc, ...). Default the first the system has of
	// verbs, ipoib, tcp, grpc, gcl.
	Transport string `yaml:"transport"`

	// IntraTransport carries traffic inside a node (nccl, gcl, shm).
	// Default the first the system has of nccl, gcl, shm, else the link
	// as it is.
	IntraTransport string `yaml:"intra_transport"`

	// Bucket is the gradient bucket size: the all-reduce of a bucket starts
	// as soon as backward has produced it; 1 B to 1 TiB. Default 25 MiB.
	Bucket units.Bytes `yaml:"bucket"`

	// DelayAllReduce all-reduces the whole gradient after the backward
	// pass instead of bucket by bucket during it, as apex's
	// DistributedDataParallel does with delay_allreduce=True (NVIDIA's
	// v0.7 Mask R-CNN, tools/train_mlperf.py). Default false.
	DelayAllReduce bool `yaml:"delay_allreduce"`

	// Interference is the share of a device's compute rate an overlapped
	// gradient exchange takes: the backward pass runs at 1 − interference
	// while a bucket's collective is in flight; in [0, 0.9], 0 turns it
	// off. Default (nil) derived from the device (DefaultInterference).
	Interference *float64 `yaml:"interference"`
}

// Input describes how training samples reach the devices.
type Input struct {
	// Storage is where samples are read from: local (each node's drives),
	// shared (the system's shared file server, many small files), shared-db
	// (one database file on the shared file server, whose readers
	// serialize) or synthetic (made in memory: no I/O). Default local.
	Storage string `yaml:"storage"`

	// Staging copies the data set from the shared file server onto each
	// node's local drives before training (a one-time cost); reads are
	// then local. Default false.
	Staging bool `yaml:"staging"`

	// Prefetch is the depth of the queue of prepared batches. Default 2.
	Prefetch int `yaml:"prefetch"`

	// Precision of samples copied to the device: int8 (decoded pixels as
	// bytes, cast on the device) or fp32. Default fp32. It applies to host
	// decoding only.
	Precision string `yaml:"precision"`

	// Decode is where samples are decoded and augmented: host (on the
	// node's CPU cores, then copied to the devices as pixels of
	// Precision) or device (on the accelerators, as NVIDIA DALI's "mixed"
	// decoder does with nvJPEG or a hardware JPEG decoder: the host copies
	// the stored bytes and its cores do not decode). Default host.
	Decode string `yaml:"decode"`

	// Workers is the number of decoding processes per device when Decode
	// is host (PyTorch's DataLoader num_workers; DeepLearningExamples'
	// ResNet-50 runs 8 on a DGX-1): a node decodes at most Workers ×
	// devices samples at once, and at most one per core. 0 to 4096.
	// Default 0: as many as the node's cores.
	Workers int `yaml:"workers"`

	// DeviceDecode is the accelerator time to decode and augment one
	// sample when Decode is device, seconds; it is added to the compute
	// time per sample. Default 0: the decode's cost on the device is not
	// modelled, which makes a prediction optimistic by that cost (measure
	// it, or leave it at 0 when a calibration already includes it).
	DeviceDecode units.Seconds `yaml:"device_decode"`

	// PageCache says whether the operating system's page cache keeps the
	// samples a node has read, so that later epochs read them from host
	// memory instead of the local drives: auto (the node keeps up to
	// PageCacheShare of its host memory of the data set) or off (every
	// read goes to the drives, as after dropping the caches or with
	// direct I/O). Default auto. It applies to local storage, staged or
	// not.
	PageCache string `yaml:"page_cache"`
}

// Sweep lists the configurations to run.
type Sweep struct {
	// Devices lists total device counts, at most 1000 of them. Default the
	// recipe's device count (or the whole node when it has none).
	Devices []int `yaml:"devices"`

	// Batch lists per-device batches, at most 1000 of them. Default
	// [BatchPerDevice].
	Batch []int `yaml:"batch"`
}

// Calibration is a measured compute law for the scenario's device: a step
// of b samples on one device takes b/V0 + T.
type Calibration struct {
	// File is a calibration file written by `scaleplan fit --out`, relative
	// to the scenario file. Default "" (use V0 and T).
	File string `yaml:"file"`

	// V0 is the ideal throughput of the Devices devices together,
	// samples/s; 0.001 to 1e12 unless File is set.
	V0 float64       `yaml:"v0"`
	T  units.Seconds `yaml:"t"` // cost time per step, seconds; 0 to a day

	// Device is the device kind named in the calibration file's entry,
	// used to choose among its entries. Default "" (any).
	Device string `yaml:"device"`

	// Devices is the device count V0 and T were measured on: 1 calibrates
	// compute alone; at most sim.MaxRanks. Default 1.
	Devices int `yaml:"devices"`

	Source string `yaml:"source"` // where the figures come from; default ""

	// V0Interval and TInterval are the calibration file's intervals of V0
	// and T at its level (calib.ThroughputEntry), [low, high]; zero when
	// the figures were given inline or the file has none.
	V0Interval [2]float64       `yaml:"-"`
	TInterval  [2]units.Seconds `yaml:"-"`
}

// SetIntervals copies e's v0 and t intervals into c where e has both.
func (c *Calibration) SetIntervals(e *calib.ThroughputEntry) {
	if len(e.V0Interval) == 2 && len(e.TInterval) == 2 {
		c.V0Interval = [2]float64{e.V0Interval[0], e.V0Interval[1]}
		c.TInterval = [2]units.Seconds{e.TInterval[0], e.TInterval[1]}
	}
}

// Stragglers describes per-step variation of compute time.
type Stragglers struct {
	// Jitter is the coefficient of variation of a device's compute time
	// per step (standard deviation over mean), >= 0. Synchronous steps wait
	// for the slowest device. Default 0.
	Jitter float64 `yaml:"jitter"`
}

// Overheads are fixed costs of a training run outside the steps.
type Overheads struct {
	Startup    units.Seconds `yaml:"startup"`    // process start, model build, first compile; default 0, at most 1e8 s
	Evaluation units.Seconds `yaml:"evaluation"` // all evaluation passes together; default 0, at most 1e8 s
}

// Compute returns the compute of one device by the law v = b/(b/v0 + t):
// a sample takes Devices/V0, a step t, of which the optimizer's update
// takes update where t holds it (the roofline's update carved out of t),
// the rest fixed per micro-batch.
func (c *Calibration) Compute(update units.Seconds) sim.Compute {
	v0 := c.V0 / float64(max(c.Devices, 1))
	u := min(update, c.T)
	return sim.Compute{PerSample: units.Seconds(1 / v0), Fixed: c.T - u, Update: u}
}

// Exchange names the gradient exchange as tables show it: AllReduce, and
// for hierarchical with another all-reduce than a ring between nodes, that
// one too ("hierarchical, double-tree between nodes").
func (p *Parallelism) Exchange() string {
	if p.AllReduce == "hierarchical" && p.InterNode != "" && p.InterNode != "ring" {
		return p.AllReduce + ", " + p.InterNode + " between nodes"
	}
	return p.AllReduce
}

// Enumerations a scenario's fields take.
var (
	AllReduceAlgorithms = []string{"ring", "halving-doubling", "tree", "double-tree", "hierarchical", "torus-2d", "ps", "async-ps", "host-staged", "nccl"}
	// NCCLAlgorithms and NCCLProtocols are what parallelism.nccl_algo and
	// nccl_proto may fix.
	NCCLAlgorithms = []string{"ring", "tree", "nvls", "collnet", "nvlstree"}
	NCCLProtocols  = []string{"ll", "ll128", "simple"}
	// InterNodeAlgorithms are the all-reduces hierarchical may run between
	// nodes (parallelism.inter_node).
	InterNodeAlgorithms = []string{"ring", "halving-doubling", "tree", "double-tree"}
	Schedules           = []string{"gpipe", "1f1b"}
	StorageKinds        = []string{"local", "shared", "shared-db", "synthetic"}
	InputPrecisions     = []string{"fp32", "int8"}
	DecodeSites         = []string{"host", "device"}
	PageCacheModes      = []string{"auto", "off"}
	Precisions          = []string{"fp32", "tf32", "fp16", "bf16"}
)

// Options says where to find catalogue and profile files beyond the
// built-in ones.
type Options struct {
	CatalogPaths []string // extra hardware catalogue files or directories
	ProfilePaths []string // extra model profile files or directories

	// Edit, if not nil, changes the scenario after it is read and before
	// it is resolved and checked, so that command-line overrides meet the
	// same checks as the file's values. Default nil.
	Edit func(*Scenario)

	// Overrides maps the YAML paths that Edit changed ("sweep.devices")
	// to where their values came from ("--devices"). A problem at such a
	// path, or below it, names that source instead of the file's line,
	// which holds the value that was replaced. Default nil.
	Overrides map[string]string

	// Calibrations, if any has a throughput entry for the scenario's model
	// on its device kind at its precision (PickCalibration), replace the
	// scenario's compute, roofline or calibration, with that measured law
	// (Resolved.CalibratedBy names the file). Default nil.
	Calibrations []CalibrationFile

	// Host is the host costs of the machines that run the scenarios (a
	// table of scripts/torchhost.py's, compute.ReadHostTable): the
	// operator model charges them to a scenario's eager steps
	// (Resolved.Host). Default nil: compute.MeasuredHost and the published
	// launch and synchronisation.
	Host *compute.HostCosts
}

// attribute renames the problems at paths that opt.Overrides names, so
// that they point at the command line rather than the file, and marks
// them as having no line.
func (opt Options) attribute(ps *config.Problems) {
	for i, p := range ps.List {
		for path, src := range opt.Overrides {
			rest, ok := strings.CutPrefix(p.Path, path)
			if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				ps.List[i].Path = fmt.Sprintf("%s (%s)", src, p.Path)
				ps.List[i].Line = -1
				break
			}
		}
	}
}

// Resolved is a scenario with every name resolved and every default filled in.
type Resolved struct {
	Scenario
	File string // the file it was read from ("scenarios/shipped/NAME.yaml" for shipped ones)
	// CalibratedBy is the Options.Calibrations file whose entry replaced
	// the scenario's compute, or "".
	CalibratedBy string
	// Fabric are the Options.Calibrations files with a fabric entry for
	// the scenario's system: Build sets the network's levels they give
	// (ApplyFabric). Default nil.
	Fabric []CalibrationFile
	// Operators is the efficiencies of an Options.Calibrations operators
	// entry fitted on the scenario's device kind in eager mode
	// (PickOperators), and OperatorsBy its file; nil and "" if none.
	// Build's operator model computes by them.
	Operators   *compute.Efficiencies
	OperatorsBy string
	// Host is Options.Host: the host costs Build's operator model charges
	// the scenario's eager steps; nil for the defaults.
	Host *compute.HostCosts
	// Comm is the Options.Calibrations comm entry of the scenario's model,
	// device and precision (PickComm), and CommBy its file; nil and "" if
	// none. Build sets the effective bandwidth of the level its device
	// counts spanned from it.
	Comm   *calib.CommEntry
	CommBy string
	// commBW caches the bandwidth Comm sets, shared by copies.
	commBW *commLevel

	Catalog  *hw.Catalog
	Profiles *model.Profiles
	Sys      *hw.System
	Node     *hw.Node
	Device   *hw.Device
	Mdl      *model.Model
	Rcp      *model.Recipe
	Data     *model.Dataset
}

// Point is one configuration of a sweep.
type Point struct {
	Devices        int // total devices
	Nodes          int // nodes used
	DevicesPerNode int // devices used in each node; with parallelism.placement, on the largest
	Replicas       int // data-parallel replicas: Devices / stages
	BatchPerDevice int // micro-batch per device, samples
	GlobalBatch    int // samples per optimizer step: BatchPerDevice · Replicas · Accumulation
}

// Names returns the names of the shipped scenarios, sorted.
func Names() []string {
	files, _ := fs.Glob(shipped, "shipped/*.yaml")
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".yaml")
	}
	slices.Sort(names)
	return names
}

// Load reads the scenario named by ref: a shipped scenario's name, or the
// path of a YAML file. It resolves the scenario against the catalogue and
// profiles (with opt's extra files and the scenario's inline entries) and
// validates it, reporting every problem with its line.
func Load(ref string, opt Options) (*Resolved, error) {
	var data []byte
	var file string
	if b, err := shipped.ReadFile("shipped/" + ref + ".yaml"); err == nil && !strings.ContainsAny(ref, `/\`) {
		data, file = b, "scenarios/shipped/"+ref+".yaml"
	} else if fi, err := os.Stat(ref); err == nil && !fi.IsDir() {
		if data, err = config.ReadFile(ref, "scenario file"); err != nil {
			return nil, err
		}
		file = ref
	} else {
		if strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") || strings.ContainsAny(ref, `/\`) {
			return nil, fmt.Errorf("scenario file %s: %w", ref, fs.ErrNotExist)
		}
		return nil, errors.New(config.Unknown("scenario", ref, Names()))
	}
	return Parse(bytes.NewReader(data), file, opt)
}

// Parse reads a scenario from r; file names it in errors and anchors its
// calibration file's relative path.
func Parse(r io.Reader, file string, opt Options) (*Resolved, error) {
	var s Scenario
	root, err := config.Decode(r, &s)
	if err != nil {
		return nil, config.InFile(file, err)
	}
	if opt.Edit != nil {
		opt.Edit(&s)
	}
	var inline []hw.Inline
	if s.Catalog != nil {
		inline = append(inline, hw.Inline{Catalog: s.Catalog, File: file, Root: child(root, "catalog")})
	}
	cat, err := hw.LoadWith(opt.CatalogPaths, inline)
	if err != nil {
		return nil, err
	}
	var pinline []model.Inline
	if s.Profiles != nil {
		pinline = append(pinline, model.Inline{Document: s.Profiles, File: file, Root: child(root, "profiles")})
	}
	prof, err := model.LoadWith(opt.ProfilePaths, pinline)
	if err != nil {
		return nil, err
	}
	res := &Resolved{Scenario: s, File: file, Catalog: cat, Profiles: prof}
	var ps config.Problems
	res.resolve(&ps)
	if ps.Err() != nil {
		opt.attribute(&ps)
		ps.Locate(root)
		return nil, config.InFile(file, &ps)
	}
	res.Host = opt.Host
	if len(opt.Calibrations) > 0 {
		cal, i, err := PickCalibration(opt.Calibrations, res.Mdl.Name, res.sampleUnit(), res.Device, res.Precision)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", res.Name, err)
		}
		if cal != nil {
			res.Calibration, res.CalibratedBy = cal, opt.Calibrations[i].Path
		}
		res.Fabric = FabricFiles(opt.Calibrations, res.Sys.Name)
		if res.Operators, res.OperatorsBy, err = PickOperators(opt.Calibrations, res.Device, res.Mode); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", res.Name, err)
		}
		if e, i := PickComm(opt.Calibrations, res.Mdl.Name, res.Device, res.Precision); e != nil {
			res.Comm, res.CommBy, res.commBW = e, opt.Calibrations[i].Path, &commLevel{}
		}
	}
	return res, nil
}

// child returns the value node of key in the document's top mapping.
func child(root *yaml.Node, key string) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			// Problems inside an inline section have paths relative to it.
			return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n.Content[i+1]}, Line: n.Content[i+1].Line}
		}
	}
	return nil
}

// resolve looks up names, fills in defaults and checks values, adding every
// problem to ps.
func (r *Resolved) resolve(ps *config.Problems) {
	s := &r.Scenario
	if s.Name == "" {
		ps.Addf("name", "required")
	}
	if s.Seed == 0 {
		s.Seed = 1
	}

	if s.System == "" {
		ps.Addf("system", "required")
	} else if sys, node, dev, err := r.Catalog.Resolve(s.System); err != nil {
		ps.Addf("system", "%v", err)
	} else {
		r.Sys, r.Node, r.Device = sys, node, dev
	}

	if s.Mode == "" {
		s.Mode = compute.FrameworkMode(s.Framework)
	} else if _, err := compute.ParseMode(string(s.Mode)); err != nil {
		ps.Addf("mode", "%v", err)
	}

	switch s.Fuse {
	case "", FuseBNReLU:
	default:
		ps.Addf("fuse", "%q: want %s or nothing", s.Fuse, FuseBNReLU)
	}

	if s.Recipe == "" {
		ps.Addf("recipe", "required")
	} else if rc, err := r.Profiles.Recipe(s.Recipe); err != nil {
		ps.Addf("recipe", "%v", err)
	} else {
		r.Rcp = rc
		if s.Model == "" {
			s.Model = rc.Model
		}
		if s.TimedRegion != nil {
			for _, pr := range s.TimedRegion.Problems() {
				path := "timed_region"
				if pr.Field != "" {
					path += "." + pr.Field
				}
				ps.Addf(path, "%s", pr.Msg)
			}
			own := *rc
			own.TimedRegion = s.TimedRegion
			r.Rcp = &own
		}
	}
	if s.Model != "" {
		if m, err := r.Profiles.Model(s.Model); err != nil {
			ps.Addf("model", "%v", err)
		} else {
			r.Mdl = m
			if r.Rcp != nil && r.Rcp.Model != m.Name {
				ps.Addf("model", "recipe %q trains %q, not %q", r.Rcp.Name, r.Rcp.Model, m.Name)
			}
		}
	}
	if r.Rcp != nil {
		ds := r.Rcp.Dataset
		if ds == "" && r.Mdl != nil {
			ds = r.Mdl.Dataset
		}
		if d, err := r.Profiles.Dataset(ds); err == nil {
			r.Data = d
		} else {
			ps.Addf("recipe", "%v", err)
		}
	}

	if s.Fuse != "" && r.Mdl != nil && !slices.Contains(fuseBNModels, r.Mdl.Name) {
		ps.Addf("fuse", "%s: only the operators of %s fuse their batch norms, not %s's", s.Fuse, strings.Join(fuseBNModels, " and "), r.Mdl.Name)
	}

	r.defaults()
	r.loadCalibration(ps)
	r.loadSteps(ps)
	r.check(ps)
}

// FuseBNReLU is the value of Scenario.Fuse for a program that runs each
// batch norm with the ReLU (and a residual block's last one with the add
// and ReLU) after it as one kernel.
const FuseBNReLU = "bn-relu"

// fuseBNModels are the models whose operator lists fuse FuseBNReLU: their
// residual blocks' norms (model.Shape.FuseBNReLU).
var fuseBNModels = []string{"resnet50", "ssd-resnet34"}

// sampleUnit is what one sample of the scenario's dataset is; "" when the
// dataset did not resolve.
func (r *Resolved) sampleUnit() model.SampleUnit {
	if r.Data == nil {
		return ""
	}
	return r.Data.SampleUnit
}

// loadCalibration reads the calibration file, if the scenario names one, and
// takes v0 and t from its throughput entry for the scenario's model: the
// entry measured on the fewest devices (one device calibrates compute alone),
// of the scenario's precision or none, and of Calibration.Device if set.
func (r *Resolved) loadCalibration(ps *config.Problems) {
	c := r.Calibration
	if c == nil || c.File == "" || r.Mdl == nil {
		return
	}
	cal, err := calib.ReadFile(r.CalibrationPath())
	if err != nil {
		ps.Addf("calibration.file", "%v", err)
		return
	}
	onDevice := func(d string) bool { return c.Device == "" || d == c.Device }
	best := throughputEntry(cal, r.Mdl.Name, r.sampleUnit(), onDevice, r.Precision)
	if best == nil {
		var seen []string
		for _, e := range cal.Throughput {
			seen = append(seen, fmt.Sprintf("%s on %d %s %s", e.Model, e.Devices, e.Device, e.Precision))
		}
		ps.Addf("calibration.file", "%s has no throughput entry for model %q at %s (entries: %s)",
			c.File, r.Mdl.Name, r.Precision, strings.Join(seen, "; "))
		return
	}
	if best.V0Unbounded {
		ps.Addf("calibration.file", "%s: %s, or give calibration.v0", c.File, unboundedV0(best))
		return
	}
	if !(best.V0 >= minV0 && best.V0 <= maxV0) || !(best.T >= 0 && best.T <= maxStepCost) {
		ps.Addf("calibration.file", "%s: the entry of model %q has v0 %v samples/s and t %s; want v0 within %g to %g and t within 0 to %s",
			c.File, best.Model, best.V0, showSeconds(best.T), minV0, maxV0, maxStepCost)
		return
	}
	c.V0, c.T, c.Devices = best.V0, best.T, best.Devices
	c.SetIntervals(best)
	if c.Source == "" {
		c.Source = c.File + " (" + best.Source + ")"
	}
}

// defaults fills in what the scenario left out from the recipe and system.
func (r *Resolved) defaults() {
	s := &r.Scenario
	p := &s.Parallelism
	if r.Rcp != nil {
		if s.Precision == "" {
			s.Precision = string(r.Rcp.Precision)
		}
		if s.BatchPerDevice == 0 {
			s.BatchPerDevice = int(r.Rcp.PerDeviceBatch)
		}
		if p.PipelineStages == 0 {
			p.PipelineStages = r.Rcp.PipelineStages
		}
		if p.Accumulation == 0 {
			p.Accumulation = r.Rcp.GradientAccumulation
		}
	}
	if s.Precision == "" {
		s.Precision = "fp32"
	}
	p.PipelineStages = max(p.PipelineStages, 1)
	p.Accumulation = max(p.Accumulation, 1)
	if p.Schedule == "" {
		p.Schedule = "1f1b"
	}
	if p.AllReduce == "" {
		p.AllReduce = defaultAllReduce(r.Sys, r.Device)
	}
	if p.InterNode == "" {
		p.InterNode = "ring"
	}
	if p.PSShards == 0 {
		p.PSShards = 1
	}
	if p.Bucket == 0 {
		p.Bucket = 25 * units.MiB
	}
	if r.Sys != nil {
		if p.Transport == "" {
			p.Transport = defaultTransport(r.Sys)
		}
		if p.IntraTransport == "" {
			p.IntraTransport = defaultIntraTransport(r.Sys)
		}
	}
	if r.Node != nil && p.DevicesPerNode == 0 {
		p.DevicesPerNode = r.Node.Devices
	}
	in := &s.Input
	if in.Storage == "" {
		in.Storage = "local"
	}
	if in.Prefetch == 0 {
		in.Prefetch = 2
	}
	if in.Precision == "" {
		in.Precision = "fp32"
	}
	if in.Decode == "" {
		in.Decode = "host"
	}
	if in.PageCache == "" {
		in.PageCache = "auto"
	}
	if len(s.Sweep.Devices) == 0 {
		switch {
		case r.Rcp != nil && r.Rcp.Devices > 0:
			s.Sweep.Devices = []int{r.Rcp.Devices}
		case r.Node != nil:
			s.Sweep.Devices = []int{r.Node.Devices}
		}
	}
	if len(s.Sweep.Batch) == 0 && s.BatchPerDevice > 0 {
		s.Sweep.Batch = []int{s.BatchPerDevice}
	}
	if c := s.Calibration; c != nil && c.Devices == 0 {
		c.Devices = 1
	}
}

// defaultAllReduce is Parallelism.AllReduce's default on system sys of
// devices dev: nccl where they are NVIDIA GPUs and sys lists an nccl
// transport, else ring. Either may be nil (then ring).
func defaultAllReduce(sys *hw.System, dev *hw.Device) string {
	if dev != nil && dev.Kind == hw.GPU && strings.EqualFold(dev.Vendor, "NVIDIA") && sys != nil {
		if _, ok := sys.Transports[hw.NCCL]; ok {
			return "nccl"
		}
	}
	return "ring"
}

// defaultTransport is Parallelism.Transport's default on sys.
func defaultTransport(sys *hw.System) string {
	return firstOf(sys, "verbs", "tcpxo", "ipoib", "tcp", "grpc", "gcl")
}

// defaultIntraTransport is Parallelism.IntraTransport's default on sys.
func defaultIntraTransport(sys *hw.System) string { return firstOf(sys, "nccl", "gcl", "shm") }

func firstOf(sys *hw.System, names ...string) string {
	for _, n := range names {
		if _, ok := sys.Transports[n]; ok {
			return n
		}
	}
	return ""
}

// check adds a problem for every impossible or unknown value.
func (r *Resolved) check(ps *config.Problems) {
	s := &r.Scenario
	p := &s.Parallelism
	oneOf(ps, "precision", "precision", s.Precision, Precisions)
	oneOf(ps, "parallelism.allreduce", "all-reduce algorithm", p.AllReduce, AllReduceAlgorithms)
	oneOf(ps, "parallelism.inter_node", "all-reduce between nodes", p.InterNode, InterNodeAlgorithms)
	if p.InterNode != "ring" && p.AllReduce != "hierarchical" {
		ps.Addf("parallelism.inter_node", "%q is hierarchical's all-reduce between nodes; allreduce %q has none (set allreduce: hierarchical, or leave inter_node out)", p.InterNode, p.AllReduce)
	}
	r.checkNCCL(ps)
	oneOf(ps, "parallelism.schedule", "pipeline schedule", p.Schedule, Schedules)
	oneOf(ps, "input.storage", "storage", s.Input.Storage, StorageKinds)
	oneOf(ps, "input.precision", "input precision", s.Input.Precision, InputPrecisions)
	oneOf(ps, "input.decode", "decode site", s.Input.Decode, DecodeSites)
	if w := s.Input.Workers; w < 0 || w > 4096 {
		ps.Addf("input.workers", "must be 0 (the node's cores) to 4096 decoding processes per device, got %d", w)
	} else if w > 0 && s.Input.Decode == "device" {
		ps.Addf("input.workers", "are the host's decoding processes; they need decode: host (decode is %q)", s.Input.Decode)
	}
	oneOf(ps, "input.page_cache", "page cache mode", s.Input.PageCache, PageCacheModes)
	switch dd := float64(s.Input.DeviceDecode); {
	case !(dd >= 0) || math.IsInf(dd, 0):
		ps.Addf("input.device_decode", "must be a finite time >= 0, got %v", s.Input.DeviceDecode)
	case dd > 0 && s.Input.Decode != "device":
		ps.Addf("input.device_decode", "is the device's decode time; it needs decode: device (decode is %q)", s.Input.Decode)
	}
	badBatch := s.BatchPerDevice < 0 || s.BatchPerDevice > sim.MaxBatch
	if badBatch {
		ps.Addf("batch_per_device", "must be in [1, %d], got %d", sim.MaxBatch, s.BatchPerDevice)
	}
	if p.PipelineStages < 1 || p.Accumulation < 1 || p.PSShards < 1 {
		ps.Addf("parallelism", "pipeline_stages, accumulation and ps_shards must be >= 1")
	}
	if p.Accumulation > sim.MaxAccumulation {
		ps.Addf("parallelism.accumulation", "must be at most %d, got %d", sim.MaxAccumulation, p.Accumulation)
	}
	if p.DevicesPerNode < 0 {
		ps.Addf("parallelism.devices_per_node", "must be > 0, got %d", p.DevicesPerNode)
	}
	if !(p.Bucket >= 1 && p.Bucket <= maxBucket) {
		ps.Addf("parallelism.bucket", "must be within 1 B to %s, got %v", maxBucket, p.Bucket)
	}
	if f := p.Interference; f != nil && !(*f >= 0 && *f <= maxInterferenceSetting) {
		ps.Addf("parallelism.interference", "must be within 0 to %g, got %v", maxInterferenceSetting, *f)
	}
	if s.Input.Prefetch < 1 {
		ps.Addf("input.prefetch", "must be >= 1, got %d", s.Input.Prefetch)
	}
	if j := s.Stragglers.Jitter; !(j >= 0 && j <= sim.MaxJitter) {
		ps.Addf("stragglers.jitter", "must be in [0, %g], got %v", sim.MaxJitter, j)
	}
	for _, o := range []struct {
		path string
		v    units.Seconds
	}{{"overheads.startup", s.Overheads.Startup}, {"overheads.evaluation", s.Overheads.Evaluation}} {
		if !(o.v >= 0 && o.v <= maxOverhead) {
			ps.Addf(o.path, "must be within 0 to %s, got %s", maxOverhead, showSeconds(o.v))
		}
	}
	if r.Sys != nil {
		if p.Transport != "" {
			if _, err := r.Sys.Transport(p.Transport); err != nil {
				ps.Addf("parallelism.transport", "%v", err)
			}
		}
		if p.IntraTransport != "" {
			if _, err := r.Sys.Transport(p.IntraTransport); err != nil {
				ps.Addf("parallelism.intra_transport", "%v", err)
			}
		}
		if (s.Input.Storage == "shared" || s.Input.Storage == "shared-db" || s.Input.Staging) && r.Sys.SharedStorage == nil {
			ps.Addf("input.storage", "system %q has no shared storage", r.Sys.Name)
		}
	}
	if r.Node != nil && p.DevicesPerNode > r.Node.Devices {
		ps.Addf("parallelism.devices_per_node", "%d is more than node %q has (%d)", p.DevicesPerNode, r.Node.Name, r.Node.Devices)
	}
	if len(p.Placement) > 0 {
		r.checkPlacement(ps)
	}
	if len(s.Sweep.Batch) == 0 && r.Rcp != nil {
		ps.Addf("sweep.batch", "no batch: set batch_per_device or sweep.batch")
	}
	for i, b := range s.Sweep.Batch {
		if badBatch && b == s.BatchPerDevice {
			continue // said of batch_per_device, which the sweep took
		}
		if b <= 0 || b > sim.MaxBatch {
			ps.Addf(fmt.Sprintf("sweep.batch[%d]", i), "batch must be in [1, %d], got %d", sim.MaxBatch, b)
		}
	}
	repeats(ps, "sweep.batch", s.Sweep.Batch)
	repeats(ps, "sweep.devices", s.Sweep.Devices)
	for _, l := range []struct {
		path string
		n    int
	}{{"sweep.batch", len(s.Sweep.Batch)}, {"sweep.devices", len(s.Sweep.Devices)}} {
		if l.n > maxSweep {
			ps.Addf(l.path, "%d values; at most %d", l.n, maxSweep)
		}
	}
	if len(s.Sweep.Devices) == 0 && r.Rcp != nil && r.Node != nil {
		ps.Addf("sweep.devices", "no device count")
	}
	for i, n := range s.Sweep.Devices {
		where := fmt.Sprintf("sweep.devices[%d]", i)
		if n <= 0 || n > sim.MaxRanks {
			ps.Addf(where, "device count must be in [1, %d], got %d", sim.MaxRanks, n)
			continue
		}
		if n%p.PipelineStages != 0 {
			ps.Addf(where, "%d devices do not divide into %d pipeline stages", n, p.PipelineStages)
		}
		if r.Node != nil && r.Sys != nil && p.DevicesPerNode > 0 && len(p.Placement) == 0 {
			per := min(p.DevicesPerNode, n)
			if n%per != 0 {
				ps.Addf(where, "%d devices do not fill whole nodes of %d", n, per)
			} else if nodes := n / per; nodes > r.Sys.MaxNodes {
				ps.Addf(where, "%d devices need %d nodes of %d devices; system %q has %d", n, nodes, per, r.Sys.Name, r.Sys.MaxNodes)
			}
		}
	}
	if c := s.Calibration; c != nil {
		if c.File == "" && !(c.V0 >= minV0 && c.V0 <= maxV0) {
			ps.Addf("calibration.v0", "must be within %g to %g samples/s, got %v", minV0, maxV0, c.V0)
		}
		if !(c.T >= 0 && c.T <= maxStepCost) {
			ps.Addf("calibration.t", "must be within 0 to %s, got %s", maxStepCost, showSeconds(c.T))
		}
		if c.Devices < 1 || c.Devices > sim.MaxRanks {
			ps.Addf("calibration.devices", "must be within 1 to %d, got %d", sim.MaxRanks, c.Devices)
		}
	}
}

// checkPlacement reports a placement entry outside 1 to the node's
// devices, more nodes than the system has, and a device sweep other than
// the placement's sum.
func (r *Resolved) checkPlacement(ps *config.Problems) {
	pl := r.Parallelism.Placement
	for i, k := range pl {
		if k < 1 || (r.Node != nil && k > r.Node.Devices) || k > sim.MaxRanks {
			most := sim.MaxRanks
			if r.Node != nil {
				most = r.Node.Devices
			}
			ps.Addf(fmt.Sprintf("parallelism.placement[%d]", i), "must be within 1 to %d devices, got %d", most, k)
			return
		}
	}
	sum := sumInts(pl)
	if r.Sys != nil && len(pl) > r.Sys.MaxNodes {
		ps.Addf("parallelism.placement", "%d nodes; system %q has %d", len(pl), r.Sys.Name, r.Sys.MaxNodes)
	}
	if !slices.Equal(r.Sweep.Devices, []int{sum}) {
		ps.Addf("sweep.devices", "must be the placement's %d devices alone, got %v", sum, r.Sweep.Devices)
	}
}

// repeats reports each value of list at path that an earlier one already
// gave: the sweep would simulate and print that configuration twice.
func repeats(ps *config.Problems, path string, list []int) {
	first := make(map[int]int, len(list))
	for i, v := range list {
		if j, dup := first[v]; dup {
			ps.Addf(fmt.Sprintf("%s[%d]", path, i), "%d is given twice (also at %s[%d])", v, path, j)
			continue
		}
		first[v] = i
	}
}

// showSeconds prints v as units.Seconds does, or with four digits where
// that would be past the unit's largest multiple.
func showSeconds(v units.Seconds) string {
	if s := v.String(); len(s) <= 24 {
		return s
	}
	return strconv.FormatFloat(float64(v), 'g', 4, 64) + " s"
}

// Plausible bounds of a scenario's figures, bounds included: a value past
// one is a mistake (a unit typo, a subnormal number such as 5e-324) that
// would make the simulator's times absurd, or a sweep no run could finish.
const (
	maxBucket   = units.TiB            // parallelism.bucket [25 MiB by default]
	maxOverhead = units.Seconds(1e8)   // overheads.startup and .evaluation, about 3 years
	minV0       = 1e-3                 // calibration.v0, samples/s [25 to 49,017 with the published calibrations]
	maxV0       = 1e12                 // calibration.v0, samples/s
	maxStepCost = units.Seconds(86400) // calibration.t, a day per step [0 to 54 ms]
	maxSweep    = 1000                 // values in sweep.devices and in sweep.batch [at most 6]

	// maxInterferenceSetting bounds parallelism.interference: compute at a
	// tenth of its rate at the least [0.014 to 0.222 derived; 0.40 the
	// largest slowdown measured, DefaultInterference].
	maxInterferenceSetting = 0.9
)

func oneOf(ps *config.Problems, path, kind, v string, valid []string) {
	if !slices.Contains(valid, v) {
		ps.Addf(path, "%s", config.Unknown(kind, v, valid))
	}
}

// Points expands the sweep: every device count with every batch, in the
// order the scenario lists them.
func (r *Resolved) Points() []Point {
	p := r.Parallelism
	var pts []Point
	for _, n := range r.Sweep.Devices {
		per := n
		if p.DevicesPerNode > 0 {
			per = min(p.DevicesPerNode, n)
		}
		nodes := n / per
		if len(p.Placement) > 0 {
			nodes, per = len(p.Placement), slices.Max(p.Placement)
		}
		for _, b := range r.Sweep.Batch {
			rep := n / p.PipelineStages
			pts = append(pts, Point{
				Devices:        n,
				Nodes:          nodes,
				DevicesPerNode: per,
				Replicas:       rep,
				BatchPerDevice: b,
				GlobalBatch:    b * rep * p.Accumulation,
			})
		}
	}
	return pts
}

// CalibrationPath returns the calibration file's path relative to the
// working directory, or "" if the scenario has none.
func (r *Resolved) CalibrationPath() string {
	if r.Calibration == nil || r.Calibration.File == "" {
		return ""
	}
	if filepath.IsAbs(r.Calibration.File) || strings.HasPrefix(r.File, "scenarios/shipped/") {
		return r.Calibration.File
	}
	return filepath.Join(filepath.Dir(r.File), r.Calibration.File)
}

// checkNCCL adds a problem for an NCCL override that is unknown or set
// without the nccl exchange.
func (r *Resolved) checkNCCL(ps *config.Problems) {
	p := &r.Scenario.Parallelism
	for _, f := range []struct {
		field, what, v string
		valid          []string
	}{
		{"parallelism.nccl_algo", "NCCL algorithm", p.NCCLAlgo, NCCLAlgorithms},
		{"parallelism.nccl_proto", "NCCL protocol", p.NCCLProto, NCCLProtocols},
	} {
		if f.v == "" {
			continue
		}
		oneOf(ps, f.field, f.what, f.v, f.valid)
		if p.AllReduce != "nccl" {
			ps.Addf(f.field, "%q fixes the nccl exchange's choice; allreduce %q is not nccl (set allreduce: nccl, or leave %s out)", f.v, p.AllReduce, f.field)
		}
	}
}
