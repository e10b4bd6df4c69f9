package torchbench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/config"
	"scaleplan/internal/procout"
)

//go:embed torchbench.py
var script []byte

// Script returns the embedded Python script, torchbench.py. It can be
// saved and run on its own on a machine without Go:
//
//	python3 torchbench.py --help
func Script() []byte { return bytes.Clone(script) }

// The models the script trains, by their names in the model catalogue,
// and what each is.
var models = []struct{ name, task string }{
	{"resnet50", "classify"},
	{"resnet18", "classify"},
	{"efficientnet-b4", "classify"},
	{"maskrcnn-r50-fpn", "detect"},
	{"transformer-base", "translate"},
	{"bert-base-squad", "qa"},
	{"bert-large-squad", "qa"},
	{"gpt3-125m", "lm"},
	{"gpt3-350m", "lm"},
	{"gpt3-760m", "lm"},
	{"gpt3-1.3b", "lm"},
	{"mlp", "classify"},
	{"cnn", "classify"},
}

// taskOf returns the task of the script's model name (classify, detect,
// translate, lm, qa), "" for a name it does not train.
func taskOf(name string) string {
	for _, m := range models {
		if m.name == name {
			return m.task
		}
	}
	return ""
}

// GPTContext is the longest sequence the GPT models take: GPT-3's
// context (Brown et al. 2020, Table 2.1), the rows of their position table.
const GPTContext = 2048

// BERTPositions is the longest sequence the BERT models take: the rows of
// BERT's position table (google-research/bert, bert_config.json).
const BERTPositions = 512

// Models returns the names of the models the script can train:
//
//	resnet50          torchvision.models.resnet50, 3×224×224
//	resnet18          torchvision.models.resnet18, 3×224×224 (small tests: ImageSize 64)
//	efficientnet-b4   torchvision.models.efficientnet_b4, 3×380×380
//	maskrcnn-r50-fpn  torchvision.models.detection.maskrcnn_resnet50_fpn, 3×800×1344
//	transformer-base  torch.nn.Transformer, d 512, 6+6 layers; a sample is a sentence pair
//	bert-base-squad   BERT-base for SQuAD as run_squad.py builds it; a sample is a sequence
//	bert-large-squad  BERT-large for SQuAD
//	gpt3-125m         GPT-3 Small, 12 layers, d 768; a sample is a sequence of SeqLen tokens
//	gpt3-350m         GPT-3 Medium, 24 layers, d 1024
//	gpt3-760m         GPT-3 Large, 24 layers, d 1536
//	gpt3-1.3b         GPT-3 XL, 24 layers, d 2048
//	mlp               784-1024-1024-10 ReLU, 1×28×28 (the engine's MLP)
//	cnn               the engine's small CNN, 1×28×28
func Models() []string {
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.name
	}
	return names
}

// Precisions returns the precisions the script can train at:
//
//	fp32      FP32; TF32 tensor cores off
//	tf32      FP32 storage, TF32 matrix products and convolutions (CUDA)
//	amp-fp16  torch.autocast to float16 with a GradScaler (CUDA)
//	amp-bf16  torch.autocast to bfloat16 (CUDA with bf16, or the CPU)
func Precisions() []string { return []string{"fp32", "tf32", "amp-fp16", "amp-bf16"} }

// devices lists the valid values of Options.Device.
var devices = []string{"auto", "cpu", "cuda"}

// Backends lists the valid values of Options.Backend: auto takes nccl on
// CUDA and gloo on the CPU.
func Backends() []string { return []string{"auto", "nccl", "gloo"} }

// Options configures a run of the script. The zero value measures
// resnet50 at fp32 with the script's default batches.
type Options struct {
	// Python is the interpreter to try first. Default: python3 on PATH,
	// then /usr/bin/python3; the first that can import torch and
	// torchvision is used (see FindPython).
	Python string
	// Models are the models to measure, by the names Models returns.
	// Default ["resnet50"].
	Models []string
	// Batches are the per-device batches, in samples, swept in increasing
	// order until the first that runs out of memory. Default 8, 16, ...,
	// 1024 on CUDA and 1, 2, 4, 8, 16 on the CPU.
	Batches []int
	// Precision is one of Precisions, or several separated by commas.
	// Default "fp32".
	Precision string
	// Steps is the number of timed steps per configuration. Default 20.
	Steps int
	// Warmup is the number of untimed steps before them. 0 means the
	// default, 5; a negative value means none.
	Warmup int
	// ChannelsLast trains convolutional models in the channels_last
	// memory format. Default false.
	ChannelsLast bool
	// Compile wraps the model in torch.compile; it needs torch 2.0 or
	// later, which the script checks. Default false.
	Compile bool
	// NProc is the number of data-parallel workers on this machine (on
	// each node, with Nodes); a world of more than 1 trains with
	// DistributedDataParallel. Default 0: every visible GPU on CUDA, 1 on
	// the CPU.
	NProc int
	// Nodes is the number of machines that run the script together, each
	// with the same options but NodeRank, as torchrun's --nnodes: the
	// world is Nodes × NProc workers. Default 0: one.
	Nodes int
	// NodeRank is this machine's rank among the Nodes, from 0 to Nodes−1
	// (torchrun's --node_rank). Node rank 0 hosts the rendezvous at
	// MasterAddr:MasterPort and writes the log; the others write none.
	NodeRank int
	// MasterAddr is the address of node rank 0, as every node reaches it
	// (torchrun's --master_addr); needed with more than one node. Default
	// 127.0.0.1 on one node.
	MasterAddr string
	// MasterPort is the TCP port of the rendezvous on node rank 0, from 1
	// to 65535 (torchrun's --master_port). Default 0: 29500, torchrun's,
	// with several nodes; a free port on one.
	MasterPort int
	// Backend is torch.distributed's backend: "auto" (nccl on CUDA, gloo
	// on the CPU), "nccl" (CUDA only) or "gloo". Default "auto".
	Backend string
	// Timeout is the longest a worker waits for the others: at the
	// rendezvous of the nodes and in a collective. Default 0: 10 minutes.
	// It is passed in whole seconds, rounded up.
	Timeout time.Duration
	// Device is "auto" (CUDA when available), "cpu" or "cuda". Default
	// "auto".
	Device string
	// ImageSize is the square input size, in pixels, of resnet50,
	// resnet18, efficientnet-b4 and maskrcnn-r50-fpn; 0 or at least 32.
	// Default 0: each model's own. mlp and cnn always take 1×28×28.
	ImageSize int
	// DataDir is a torchvision ImageFolder to read images from instead of
	// synthetic data (image classification models only). Default "":
	// synthetic data made on the device.
	DataDir string
	// SeqLen is the source and target length of transformer-base, and
	// the sequence of a GPT or BERT model, in tokens: at most GPTContext
	// for GPT, BERTPositions for BERT. Default 0: 128.
	SeqLen int
	// Threads is the number of CPU threads torch uses per worker.
	// Default 0: OMP_NUM_THREADS if set, else on the CPU the available
	// cores divided by the workers.
	Threads int
	// StepRecords adds a step record for every timed step. Default false.
	StepRecords bool
	// Profile, when not "", runs the script's --profile (after each
	// batch's timed steps, a few steps under torch.profiler) and writes
	// its per-operator profiles (JSON: per model, precision and batch,
	// each operator's calls, CPU and device time and FLOPs per step) to
	// the file Profile, atomically, once the run succeeded. One worker
	// only. Default "".
	Profile string
	// Run is the run identifier written in every record. Default
	// "torchbench-" and the UTC time the script started.
	Run string
	// Env holds extra environment variables, KEY=VALUE, for the script.
	// Default none. The script sets OMP_WAIT_POLICY=PASSIVE before it
	// imports torch unless its environment sets it (OpenMP's default
	// spin-wait collapses under load); OMP_WAIT_POLICY=ACTIVE here
	// measures the spinning pool. The header's config records the policy
	// as omp_wait_policy.
	Env []string

	// extraArgs are passed to the script unchecked (tests only).
	extraArgs []string
}

// Validate reports every problem with o, or nil.
func (o *Options) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	valid := Models()
	for _, m := range o.Models {
		if !slices.Contains(valid, m) {
			msg := fmt.Sprintf("unknown model %q", m)
			if near := config.Nearest(m, valid); len(near) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", near[0])
			}
			add("%s (valid: %s)", msg, strings.Join(valid, ", "))
		}
	}
	for _, b := range o.Batches {
		if b <= 0 {
			add("batch %d: must be > 0", b)
		}
	}
	if o.Profile != "" && (o.NProc > 1 || o.Nodes > 1) {
		add("profile: one worker only (nproc %d, nodes %d)", o.NProc, o.Nodes)
	}
	precs := o.precisions()
	for _, p := range precs {
		if !slices.Contains(Precisions(), p) {
			add("unknown precision %q (valid: %s)", p, strings.Join(Precisions(), ", "))
		}
	}
	if o.Device != "" && !slices.Contains(devices, o.Device) {
		add("unknown device %q (valid: %s)", o.Device, strings.Join(devices, ", "))
	}
	if o.Device == "cpu" {
		for _, p := range precs {
			if p == "tf32" || p == "amp-fp16" {
				add("precision %s needs a CUDA device; on the CPU use fp32 or amp-bf16", p)
			}
		}
	}
	if o.Steps < 0 {
		add("steps %d: must be >= 0 (0 for the default)", o.Steps)
	}
	if o.NProc < 0 {
		add("nproc %d: must be >= 0 (0 for every visible GPU, or 1 on the CPU)", o.NProc)
	}
	errs = append(errs, o.validatePlacement()...)
	if o.ImageSize != 0 && o.ImageSize < 32 {
		add("image size %d: must be >= 32 (0 for each model's own)", o.ImageSize)
	}
	if o.SeqLen < 0 {
		add("sequence length %d: must be >= 0 (0 for 128)", o.SeqLen)
	}
	for _, m := range o.modelsOrDefault() {
		switch task := taskOf(m); {
		case task == "lm" && o.SeqLen > GPTContext:
			add("sequence length %d: model %s takes at most %d tokens, GPT-3's context", o.SeqLen, m, GPTContext)
		case task == "qa" && o.SeqLen > BERTPositions:
			add("sequence length %d: model %s takes at most %d tokens, BERT's positions", o.SeqLen, m, BERTPositions)
		}
	}
	if o.Timeout < 0 {
		add("timeout %v: must be >= 0 (0 for 10 minutes)", o.Timeout)
	}
	if o.Threads < 0 {
		add("threads %d: must be >= 0 (0 for the default)", o.Threads)
	}
	if o.DataDir != "" {
		if fi, err := os.Stat(o.DataDir); err != nil {
			add("data dir: %w", err)
		} else if !fi.IsDir() {
			add("data dir %s: not a directory", o.DataDir)
		}
		for _, m := range o.modelsOrDefault() {
			if task := taskOf(m); task != "" && task != "classify" {
				add("data dir: model %s is not an image classifier (use synthetic data)", m)
			}
		}
	}
	for _, e := range o.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			add("environment entry %q: want KEY=VALUE", e)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("torchbench: %w", errors.Join(errs...))
}

// validatePlacement reports every problem with the nodes, the node rank,
// the rendezvous address and port, and the backend.
func (o *Options) validatePlacement() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	nodes := max(o.Nodes, 1)
	switch {
	case o.Nodes < 0:
		add("nodes %d: must be >= 1 (0 for one)", o.Nodes)
	case o.NodeRank != 0 && nodes == 1:
		add("node rank %d: must be 0 on one node (set the nodes for more)", o.NodeRank)
	case o.NodeRank < 0 || o.NodeRank >= nodes:
		add("node rank %d: must be from 0 to %d, one less than the %d nodes", o.NodeRank, nodes-1, nodes)
	}
	if o.MasterPort < 0 || o.MasterPort > 65535 {
		add("master port %d: must be from 1 to 65535 (0 for %s)", o.MasterPort, defaultPortWords)
	}
	if nodes > 1 && o.MasterAddr == "" {
		add("%d nodes need the master address: the host name or IP address of node rank 0, as every node reaches it", nodes)
	}
	if strings.ContainsAny(o.MasterAddr, " \t\n,") {
		add("master address %q: want a host name or an IP address", o.MasterAddr)
	}
	if o.Backend != "" && !slices.Contains(Backends(), o.Backend) {
		add("unknown backend %q (valid: %s)", o.Backend, strings.Join(Backends(), ", "))
	}
	if o.Backend == "nccl" && o.Device == "cpu" {
		add("backend nccl needs CUDA devices; on the CPU use gloo")
	}
	return errs
}

// DefaultPort is the rendezvous port of several nodes when
// Options.MasterPort is 0: torchrun's default --master_port
// (https://docs.pytorch.org/docs/stable/elastic/run.html).
const DefaultPort = 29500

// defaultPortWords says what MasterPort 0 means.
const defaultPortWords = "29500 with several nodes, a free port on one"

func (o *Options) precisions() []string {
	if o.Precision == "" {
		return nil
	}
	ps := strings.Split(o.Precision, ",")
	for i := range ps {
		ps[i] = strings.TrimSpace(ps[i])
	}
	return ps
}

func (o *Options) modelsOrDefault() []string {
	if len(o.Models) == 0 {
		return []string{"resnet50"}
	}
	return o.Models
}

// Args validates o and returns the script's command-line flags for it,
// without --out.
func (o *Options) Args() ([]string, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var args []string
	flag := func(name string, v string) { args = append(args, "--"+name, v) }
	num := func(name string, v int) {
		if v > 0 {
			flag(name, strconv.Itoa(v))
		}
	}
	if len(o.Models) > 0 {
		flag("model", strings.Join(o.Models, ","))
	}
	if len(o.Batches) > 0 {
		bs := make([]string, len(o.Batches))
		for i, b := range o.Batches {
			bs[i] = strconv.Itoa(b)
		}
		flag("batch", strings.Join(bs, ","))
	}
	if ps := o.precisions(); len(ps) > 0 {
		flag("precision", strings.Join(ps, ","))
	}
	num("steps", o.Steps)
	switch {
	case o.Warmup > 0:
		num("warmup", o.Warmup)
	case o.Warmup < 0:
		flag("warmup", "0")
	}
	if o.ChannelsLast {
		args = append(args, "--channels-last")
	}
	if o.Compile {
		args = append(args, "--compile")
	}
	num("nproc", o.NProc)
	num("nodes", o.Nodes)
	num("node-rank", o.NodeRank)
	if o.MasterAddr != "" {
		flag("master-addr", o.MasterAddr)
	}
	num("master-port", o.MasterPort)
	if o.Backend != "" {
		flag("backend", o.Backend)
	}
	if o.Timeout > 0 {
		flag("dist-timeout", strconv.FormatInt(int64((o.Timeout+time.Second-1)/time.Second), 10))
	}
	if o.Device != "" {
		flag("device", o.Device)
	}
	num("image-size", o.ImageSize)
	if o.DataDir != "" {
		flag("data-dir", o.DataDir)
	}
	num("seq-len", o.SeqLen)
	num("threads", o.Threads)
	if o.StepRecords {
		args = append(args, "--step-records")
	}
	if o.Profile != "" {
		args = append(args, "--profile")
	}
	if o.Run != "" {
		flag("run", o.Run)
	}
	return append(args, o.extraArgs...), nil
}

// fallbacks are the interpreters FindPython tries after its arguments.
var fallbacks = []string{"python3", "/usr/bin/python3"}

// probed caches interpreters that could import torch, by path.
var probed sync.Map

// FindPython returns the path of the first interpreter that can import
// torch and torchvision, trying candidates (empty ones are skipped), then
// python3 on PATH, then /usr/bin/python3. When none can, the error names
// what was tried and what to install.
func FindPython(candidates ...string) (string, error) {
	var tried []string
	seen := map[string]bool{}
	for _, c := range append(slices.Clone(candidates), fallbacks...) {
		if c == "" {
			continue
		}
		name := c
		if !strings.ContainsRune(c, filepath.Separator) {
			name = c + " on PATH"
		}
		path, err := exec.LookPath(c)
		if err != nil {
			tried = append(tried, name+" (not found)")
			continue
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		if err := probe(path); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		return path, nil
	}
	return "", fmt.Errorf("torchbench: no python3 with torch found (tried %s): install Debian's python3-torch "+
		"and python3-torchvision, or pip install torch torchvision", strings.Join(tried, ", "))
}

// probe reports whether python can import torch and torchvision.
func probe(python string) error {
	if _, ok := probed.Load(python); ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", "import torch, torchvision")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if line := lastLine(stderr.String()); line != "" {
			return errors.New(cut(line, 100))
		}
		return err
	}
	probed.Store(python, true)
	return nil
}

// Run runs the script with opt on the best interpreter FindPython finds,
// streams its progress lines to progress (nil discards them), checks
// every record it wrote with benchlog.Decode and moves the log to out
// atomically. If anything fails, out is left as it was. On a node of
// rank above 0 (Options.NodeRank) it runs the script and leaves out as it
// was: node rank 0 writes the log of the whole cluster.
//
// When ctx is cancelled, the script (one worker) writes the batches it
// finished and Run keeps them in out, returning an error that wraps
// ErrInterrupted; with nothing finished, or several workers, out is left
// as it was.
func Run(ctx context.Context, opt Options, out string, progress io.Writer) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	if opt.NodeRank > 0 {
		// Node rank 0 writes the log; out is left as it was.
		return Bench(ctx, opt, io.Discard, progress)
	}
	if out == "" {
		return errors.New("torchbench: no output file")
	}
	var interrupted error
	err := atomicfile.Write(out, func(w io.Writer) error {
		err := Bench(ctx, opt, w, progress)
		if errors.Is(err, ErrInterrupted) {
			interrupted = err // what was measured is written: keep it
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return interrupted
}

// ErrInterrupted is wrapped by the error of a run whose context was
// cancelled after it had measured something: Bench and Run have written
// the log of the batches it finished (its header's config.interrupted
// says where it stopped).
var ErrInterrupted = errors.New("interrupted")

// Bench is Run writing the checked log to w instead of a file. Nothing is
// written to w unless every record is valid and the run succeeded, or was
// interrupted (ctx cancelled) after measuring something: then the log of
// what it measured is written and the error wraps ErrInterrupted. On a
// node of rank above 0 nothing is written to w: its workers' measurements
// are in node rank 0's log.
func Bench(ctx context.Context, opt Options, w io.Writer, progress io.Writer) error {
	args, err := opt.Args()
	if err != nil {
		return err
	}
	if progress == nil {
		progress = io.Discard
	}
	python, err := FindPython(opt.Python)
	if err != nil {
		return err
	}
	if opt.Python != "" && python != opt.Python {
		fmt.Fprintf(progress, "torchbench: %s cannot import torch; using %s\n", opt.Python, python)
	}
	dir, err := os.MkdirTemp("", "torchbench-")
	if err != nil {
		return fmt.Errorf("torchbench: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "torchbench.py")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		return fmt.Errorf("torchbench: %w", err)
	}
	// Beside it, the script that measures the host's cost per operator
	// into the header on CUDA (torchbench.py's host_costs).
	if err := os.WriteFile(filepath.Join(dir, "torchhost.py"), hostScript, 0o644); err != nil {
		return fmt.Errorf("torchbench: %w", err)
	}
	logPath := filepath.Join(dir, "log.jsonl")
	cmd := exec.CommandContext(ctx, python, append(append([]string{path}, args...), "--out", logPath)...)
	cmd.Env = append(os.Environ(), opt.Env...)
	// The script's stdout and stderr are copied by two goroutines: the
	// lock keeps them from writing to progress at once.
	pw := &procout.Locked{W: progress}
	tail := &procout.Tail{Max: 4096}
	cmd.Stdout = pw
	cmd.Stderr = io.MultiWriter(pw, tail)
	setProcessGroup(cmd)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			// A single worker writes what it finished when stopped.
			if b, rerr := os.ReadFile(logPath); rerr == nil {
				if n, cerr := check(b); cerr == nil {
					if _, werr := w.Write(b); werr != nil {
						return werr
					}
					what := "measurement and out-of-memory records"
					if n == 1 {
						what = "measurement or out-of-memory record"
					}
					return fmt.Errorf("torchbench: %w (%v); the log holds the %d %s made", ErrInterrupted, ctx.Err(), n, what)
				}
			}
			return fmt.Errorf("torchbench: %w", ctx.Err())
		}
		return fmt.Errorf("torchbench: %s %s: %w: %s", filepath.Base(python), strings.Join(args, " "), err,
			lastLine(tail.String()))
	}
	if opt.NodeRank > 0 {
		return nil // node rank 0 writes the log; the script said so
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return fmt.Errorf("torchbench: the script wrote no log: %w", err)
	}
	if _, err := check(b); err != nil {
		return fmt.Errorf("torchbench: the script wrote an invalid log: %w", err)
	}
	if opt.Profile != "" {
		if err := copyProfile(filepath.Join(dir, "log.profile.json"), opt.Profile); err != nil {
			return err
		}
	}
	_, err = w.Write(b)
	return err
}

// copyProfile writes the script's profile file from to the file to,
// atomically, after checking that it is a profile (its kind).
func copyProfile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("torchbench: the script wrote no profile: %w", err)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil || head.Kind != "torch-profile" {
		return fmt.Errorf("torchbench: the script wrote an invalid profile (kind %q): %v", head.Kind, err)
	}
	return atomicfile.Write(to, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// check reads a log and returns how many measurement and oom records it
// holds, or an error for the first record that is not valid, a first
// record that is not the script's header, or a log without any
// measurement or oom record.
func check(b []byte) (int, error) {
	r := benchlog.NewReader(bytes.NewReader(b))
	n := 0
	results := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		n++
		if n == 1 && (rec.Kind != benchlog.KindHeader || rec.Tool != "torchbench") {
			return 0, fmt.Errorf("line %d: first record is a %q from %q, want the torchbench header", r.Line(), rec.Kind, rec.Tool)
		}
		if n > 1 && rec.Kind == benchlog.KindHeader {
			return 0, fmt.Errorf("line %d: a second header", r.Line())
		}
		if rec.Kind == benchlog.KindMeasurement || rec.Kind == benchlog.KindOOM {
			results++
		}
	}
	if n == 0 {
		return 0, errors.New("empty log")
	}
	if results == 0 {
		return 0, errors.New("no measurement or oom record")
	}
	return results, nil
}

// lastLine returns the last non-blank line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
