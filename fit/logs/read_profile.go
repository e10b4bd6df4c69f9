package logs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/internal/units"
)

// OpProfile is one operator's row of a per-operator profile, per training
// step: an aten operator (or a framework range such as
// "Optimizer.step#SGD.step") with its calls, host and device times and
// the FLOPs torch.profiler counted for it (with_flops: matrix products and
// convolutions).
type OpProfile struct {
	Name string
	// Class is the operator class of the name (AtenClass), "" for a name
	// that is no operator of a class (a framework range, a view).
	Class      string
	Calls      float64
	SelfCPU    units.Seconds // host time in the operator itself
	CPU        units.Seconds // host time with its children
	SelfDevice units.Seconds // device (CUDA) time of the kernels it launched itself
	FLOPs      float64
}

// Profile is the per-operator profile of one training configuration: what
// `bench --framework torch --profile` writes beside its bench log (one per
// model, precision and batch), or a Chrome trace of torch.profiler
// (export_chrome_trace), which says nothing of the model, precision or
// batch.
type Profile struct {
	Device, Model, Precision string
	Batch                    int
	Labels                   map[string]string
	// StepTime is the bench log's step time of the configuration; 0 when
	// not known (a Chrome trace).
	StepTime units.Seconds
	Ops      []OpProfile
	Source   string // file, and the profile's index in it
}

// benchProfile is the JSON that engine/torchbench writes with --profile.
type benchProfile struct {
	Kind     string `json:"kind"`
	Device   string `json:"device"`
	Profiles []struct {
		Model     string            `json:"model"`
		Precision string            `json:"precision"`
		Batch     int               `json:"batch"`
		Labels    map[string]string `json:"labels"`
		StepTime  float64           `json:"step_time_s"`
		Ops       []struct {
			Name       string  `json:"name"`
			Calls      float64 `json:"calls"`
			SelfCPU    float64 `json:"self_cpu_s"`
			CPU        float64 `json:"cpu_s"`
			SelfDevice float64 `json:"self_device_s"`
			FLOPs      float64 `json:"flops"`
		} `json:"ops"`
	} `json:"profiles"`
}

// ProfileKind is the "kind" of the profile file engine/torchbench writes.
const ProfileKind = "torch-profile"

// ReadProfiles reads the per-operator profiles of data, the file called
// name: engine/torchbench's profile file (kind torch-profile) or a Chrome
// trace of torch.profiler (a JSON array of trace events, or an object
// whose traceEvents holds them; one profile of every complete event, the
// device kernels' times given to the operator whose External id launched
// them). Errors name the file and the field.
func ReadProfiles(name string, data []byte) ([]Profile, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty profile", name)
	}
	if data[0] == '[' || bytes.Contains(data[:min(len(data), 4096)], []byte(`"traceEvents"`)) {
		p, err := readChromeTrace(name, data)
		if err != nil {
			return nil, err
		}
		return []Profile{p}, nil
	}
	var bp benchProfile
	if err := json.Unmarshal(data, &bp); err != nil {
		return nil, fmt.Errorf("%s: not a per-operator profile (bench --framework torch --profile) or Chrome trace: %w", name, err)
	}
	if bp.Kind != ProfileKind {
		return nil, fmt.Errorf("%s: kind %q: want %q (bench --framework torch --profile) or a Chrome trace", name, bp.Kind, ProfileKind)
	}
	var ps []Profile
	for i, q := range bp.Profiles {
		where := fmt.Sprintf("%s: profiles[%d]", name, i)
		if q.Batch < 1 || !finiteNonNeg(q.StepTime) {
			return nil, fmt.Errorf("%s: batch %d, step_time_s %v: want a batch >= 1 and a finite time >= 0", where, q.Batch, q.StepTime)
		}
		p := Profile{Device: bp.Device, Model: q.Model, Precision: q.Precision, Batch: q.Batch, Labels: q.Labels,
			StepTime: units.Seconds(q.StepTime), Source: fmt.Sprintf("%s#%d", name, i+1)}
		for j, o := range q.Ops {
			// A self time is the operator's time less its children's,
			// each timed apart, so it can come out below 0.
			noise := float64(selfNoise) * max(o.Calls, 1)
			o.SelfCPU = selfTime(o.SelfCPU, max(o.CPU, noise))
			o.SelfDevice = selfTime(o.SelfDevice, noise)
			for _, v := range []float64{o.Calls, o.SelfCPU, o.CPU, o.SelfDevice, o.FLOPs} {
				if !finiteNonNeg(v) {
					return nil, fmt.Errorf("%s.ops[%d] (%s): %v: want finite numbers >= 0 (a self time counts as 0 down to minus its total CPU time, or %v a call)", where, j, o.Name, v, selfNoise)
				}
			}
			p.Ops = append(p.Ops, OpProfile{Name: o.Name, Class: AtenClass(o.Name), Calls: o.Calls, SelfCPU: units.Seconds(o.SelfCPU),
				CPU: units.Seconds(o.CPU), SelfDevice: units.Seconds(o.SelfDevice), FLOPs: o.FLOPs})
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no profile in it", name)
	}
	return ps, nil
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// selfNoise is how far below 0, per call, a self time of torch.profiler's
// table may lie and count as 0 beyond what its total allows: a microsecond
// is the resolution of its trace's timestamps.
const selfNoise = units.Microsecond

// selfTime returns v, or 0 where v lies below 0 by at most bound: the
// profiler's key_averages subtracts the children's times, each read from
// the clock apart, from the operator's, and an autograd node's children
// can overlap its own span (a CPU run of torchbench's CNN gave
// aten::nll_loss_nd −0.33 µs of a 20.7 µs total, and LogSoftmaxBackward0's
// evaluate_function −6 µs of 24.7 µs). A self time below minus the
// operator's whole time cannot come of that; it is returned as it is, for
// the caller to refuse.
func selfTime(v, bound float64) float64 {
	if v < 0 && v >= -bound {
		return 0
	}
	return v
}

// traceEvent is one event of a Chrome trace.
type traceEvent struct {
	Name string          `json:"name"`
	Ph   string          `json:"ph"`
	Cat  string          `json:"cat"`
	Ts   float64         `json:"ts"`  // µs
	Dur  float64         `json:"dur"` // µs
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	Args map[string]any  `json:"args"`
}

// deviceCats are the Chrome trace categories of work on the device.
var deviceCats = []string{"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}

// readChromeTrace reads a Chrome trace as one profile: per operator name
// its calls, inclusive and self host time (the complete events nested on
// one thread), its kernels' device time and its FLOPs (args "flops" or
// "FLOPs", where torch wrote them).
func readChromeTrace(name string, data []byte) (Profile, error) {
	var evs []traceEvent
	if data[0] == '[' {
		if err := json.Unmarshal(data, &evs); err != nil {
			return Profile{}, fmt.Errorf("%s: Chrome trace: %w", name, err)
		}
	} else {
		var obj struct {
			TraceEvents []traceEvent `json:"traceEvents"`
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return Profile{}, fmt.Errorf("%s: Chrome trace: %w", name, err)
		}
		evs = obj.TraceEvents
	}
	ops := map[string]*OpProfile{}
	byID := map[string]*OpProfile{}
	var host []traceEvent
	for _, e := range evs {
		if e.Ph != "X" || e.Name == "" {
			continue
		}
		if !finiteNonNeg(e.Dur) || math.IsNaN(e.Ts) || math.IsInf(e.Ts, 0) {
			return Profile{}, fmt.Errorf("%s: event %q: ts %v, dur %v: want finite times, dur >= 0", name, e.Name, e.Ts, e.Dur)
		}
		if slices.Contains(deviceCats, e.Cat) {
			continue
		}
		o := ops[e.Name]
		if o == nil {
			o = &OpProfile{Name: e.Name, Class: AtenClass(e.Name)}
			ops[e.Name] = o
		}
		o.Calls++
		o.CPU += units.Seconds(e.Dur * 1e-6)
		o.FLOPs += argNumber(e.Args, "flops", "FLOPs", "Flops")
		if id, ok := e.Args["External id"]; ok {
			byID[fmt.Sprint(id)] = o
		}
		host = append(host, e)
	}
	for _, e := range evs {
		if e.Ph == "X" && slices.Contains(deviceCats, e.Cat) {
			if o := byID[fmt.Sprint(e.Args["External id"])]; o != nil && e.Args["External id"] != nil {
				o.SelfDevice += units.Seconds(e.Dur * 1e-6)
			}
		}
	}
	selfTimes(host, ops)
	if len(ops) == 0 {
		return Profile{}, errors.New(name + ": Chrome trace: no complete (ph X) event of an operator")
	}
	p := Profile{Source: name}
	for _, o := range ops {
		p.Ops = append(p.Ops, *o)
	}
	slices.SortFunc(p.Ops, func(a, b OpProfile) int {
		return cmp.Or(cmp.Compare(b.SelfDevice, a.SelfDevice), cmp.Compare(b.CPU, a.CPU), strings.Compare(a.Name, b.Name))
	})
	return p, nil
}

// argNumber returns the first of keys in args that holds a number, 0 for
// none.
func argNumber(args map[string]any, keys ...string) float64 {
	for _, k := range keys {
		if v, ok := args[k].(float64); ok && finiteNonNeg(v) {
			return v
		}
	}
	return 0
}

// selfTimes sets each operator's SelfCPU: the host time of its events less
// that of the events nested in them on the same thread.
func selfTimes(evs []traceEvent, ops map[string]*OpProfile) {
	slices.SortStableFunc(evs, func(a, b traceEvent) int {
		return cmp.Or(bytes.Compare(a.Pid, b.Pid), bytes.Compare(a.Tid, b.Tid), cmp.Compare(a.Ts, b.Ts), cmp.Compare(b.Dur, a.Dur))
	})
	type open struct {
		end   float64
		name  string
		child float64
	}
	var stack []open
	var thread [2]string
	closeTo := func(ts float64) {
		for len(stack) > 0 && stack[len(stack)-1].end <= ts {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			ops[top.name].SelfCPU -= units.Seconds(top.child * 1e-6)
		}
	}
	for _, e := range evs {
		if t := [2]string{string(e.Pid), string(e.Tid)}; t != thread {
			closeTo(math.Inf(1))
			thread = t
		}
		closeTo(e.Ts)
		ops[e.Name].SelfCPU += units.Seconds(e.Dur * 1e-6)
		if len(stack) > 0 {
			stack[len(stack)-1].child += e.Dur
		}
		stack = append(stack, open{end: e.Ts + e.Dur, name: e.Name})
	}
	closeTo(math.Inf(1))
	for _, o := range ops {
		// Events that overlap without nesting (a trace cut or merged
		// badly) could take more from a parent than it lasted.
		o.SelfCPU = max(o.SelfCPU, 0)
	}
}

// atenClasses maps aten operator names (without "aten::"), forward and
// backward, to the operator classes of model.OpKind. A name it does not
// list (views, copies, framework ranges) has no class.
var atenClasses = map[string]string{
	"mm": "matmul", "addmm": "matmul", "bmm": "matmul", "baddbmm": "matmul", "matmul": "matmul", "linear": "matmul",
	"_addmm_activation": "matmul",
	"convolution":       "conv", "_convolution": "conv", "cudnn_convolution": "conv", "convolution_backward": "conv",
	"mkldnn_convolution": "conv", "thnn_conv2d": "conv", "_slow_conv2d_forward": "conv", "_slow_conv2d_backward": "conv",
	"cudnn_convolution_backward_input": "conv", "cudnn_convolution_backward_weight": "conv",
	"scaled_dot_product_attention": "attention", "_scaled_dot_product_flash_attention": "attention",
	"_scaled_dot_product_efficient_attention": "attention", "_scaled_dot_product_cudnn_attention": "attention",
	"_flash_attention_forward": "attention", "_flash_attention_backward": "attention",
	"_efficient_attention_forward": "attention", "_efficient_attention_backward": "attention",
	"_scaled_dot_product_flash_attention_backward": "attention", "_scaled_dot_product_efficient_attention_backward": "attention",
	"_scaled_dot_product_cudnn_attention_backward": "attention", "_cudnn_attention_forward": "attention", "_cudnn_attention_backward": "attention",
	"native_batch_norm": "norm", "cudnn_batch_norm": "norm", "batch_norm": "norm", "native_batch_norm_backward": "norm",
	"cudnn_batch_norm_backward": "norm", "native_layer_norm": "norm", "native_layer_norm_backward": "norm",
	"layer_norm": "norm", "native_group_norm": "norm", "native_group_norm_backward": "norm", "_batch_norm_impl_index": "norm",
	"_softmax": "softmax", "softmax": "softmax", "_log_softmax": "softmax", "log_softmax": "softmax",
	"_softmax_backward_data": "softmax", "_log_softmax_backward_data": "softmax",
	"max_pool2d_with_indices": "pool", "max_pool2d_with_indices_backward": "pool", "avg_pool2d": "pool",
	"avg_pool2d_backward": "pool", "_adaptive_avg_pool2d": "pool", "_adaptive_avg_pool2d_backward": "pool",
	"adaptive_avg_pool2d": "pool", "mean": "pool", "upsample_nearest2d": "pool", "upsample_bilinear2d": "pool",
	"embedding": "embedding", "embedding_dense_backward": "embedding", "embedding_backward": "embedding",
	"nll_loss_forward": "loss", "nll_loss_backward": "loss", "nll_loss": "loss", "cross_entropy_loss": "loss",
	"mse_loss": "loss", "mse_loss_backward": "loss", "binary_cross_entropy_with_logits": "loss",
	"add": "elementwise", "add_": "elementwise", "mul": "elementwise", "mul_": "elementwise", "div": "elementwise",
	"sub": "elementwise", "relu": "elementwise", "relu_": "elementwise", "threshold_backward": "elementwise",
	"gelu": "elementwise", "gelu_backward": "elementwise", "silu": "elementwise", "silu_": "elementwise",
	"silu_backward": "elementwise", "sigmoid": "elementwise", "sigmoid_backward": "elementwise", "tanh": "elementwise",
	"tanh_backward": "elementwise", "native_dropout": "elementwise", "native_dropout_backward": "elementwise",
	"hardtanh": "elementwise", "hardtanh_backward": "elementwise", "clamp_min": "elementwise",
	"_foreach_add_": "update", "_foreach_mul_": "update", "_foreach_addcmul_": "update", "_foreach_addcdiv_": "update",
	"_foreach_lerp_": "update", "_fused_sgd_": "update", "_fused_adam_": "update", "_fused_adamw_": "update",
}

// AtenClass returns the operator class (a model.OpKind name: matmul, conv,
// attention, norm, softmax, pool, embedding, loss, elementwise, update) of
// a profiled operator's name, such as "aten::addmm" (matmul) or
// "aten::cudnn_convolution" (conv); "" for one of no class.
func AtenClass(name string) string {
	n, ok := strings.CutPrefix(name, "aten::")
	if !ok {
		return ""
	}
	return atenClasses[n]
}
