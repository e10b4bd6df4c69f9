package compute

import (
	"math"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// Class is an operator class whose efficiency a calibration fits: the
// fraction of the peak (or of the memory bandwidth) that the kernels of
// that class reach on a device.
type Class string

// The calibrated classes. A class's efficiency is a property of the
// kernels of one architecture (Habitat, Yu et al. 2021, "Habitat: A
// Runtime-Based Computational Performance Predictor for Deep Neural
// Network Training", USENIX ATC '21, Section 3, wave scaling: an operation's time on
// another GPU scales by the ratio of the resource that bounds it), so a
// calibration fitted on one device predicts another by keeping the
// efficiencies and taking that device's peaks, bandwidth and SMs.
const (
	// TensorFP16, TensorBF16 and TensorTF32 are the dense matrix products
	// and convolutions on the tensor cores at that precision, and the
	// products of an unfused attention.
	TensorFP16 Class = "tensor-fp16"
	TensorBF16 Class = "tensor-bf16"
	TensorTF32 Class = "tensor-tf32"
	// CUDACore is a dense matrix product or convolution at fp32 on the
	// CUDA cores, and the arithmetic of the memory-bound operators, of
	// grouped convolutions and of the operators autocast runs in float32.
	CUDACore Class = "cuda-core"
	// Grouped is a grouped or depthwise convolution, memory-bound: its
	// efficiency is the fraction of the DRAM bandwidth its bytes move at
	// (EffDepthwise by default), not a fraction of a peak.
	Grouped Class = "grouped-conv"
	// Flash is a fused attention kernel (FlashAttention).
	Flash Class = "attention-fused"
	// MemoryBound is e_mem: the fraction of the DRAM bandwidth an
	// operator's bytes move at.
	MemoryBound Class = "memory"
	// TensorFP8 is the dense matrix products on the tensor cores at fp8
	// (Transformer Engine's FP8 GEMMs). It is not one of Classes: no
	// calibration measures it, and it takes EffGEMMFP8.
	TensorFP8 Class = "tensor-fp8"
)

// Classes lists the calibrated classes in the order of Efficiencies.E.
var Classes = []Class{TensorFP16, TensorBF16, TensorTF32, CUDACore, Grouped, Flash, MemoryBound}

// numClasses is len(Classes).
const numClasses = 7

// Efficiencies are a calibration's figures for one device and framework
// mode: E[i] is the efficiency of Classes[i], in (0, 1], and Launch the
// host's cost of one kernel. A zero figure stands for the default (the
// published constant, or the mode's launch cost). The zero value is the
// uncalibrated model. Efficiencies is comparable, so a law's cache key
// holds it.
type Efficiencies struct {
	E      [numClasses]float64
	Launch units.Seconds
	// StepHost is the host's cost of a step beyond what HostTime
	// models (the kernels' launches, eager modules and autograd, the
	// optimizer's and the gradient scaler's calls): the training loop's
	// own Python, zeroing the gradients, starting autograd's backward
	// pass. It is host time like the rest (HostTime.Step), overlapped
	// with the device; 0 for none, the uncalibrated model's.
	StepHost units.Seconds
	// KernelTime is the device's time per kernel beyond the roofline time
	// of its operator: what a kernel takes however little it does (its
	// start on the device, the ramp and tail of its waves). Like the
	// efficiencies it is taken as a property of an architecture's
	// kernels and carried to another device unchanged; 0 for none: the
	// uncalibrated model's KernelTime in eager mode.
	KernelTime units.Seconds
	// EventsInStepHost says the calibration's rows recorded timer events
	// (Config.TimerEvents) on a host that measured no event's cost, so
	// that StepHost took what they cost: a step under these efficiencies
	// charges no timer events of its own. false: they are charged at the
	// host's HostCosts.Event, as without a calibration.
	EventsInStepHost bool
}

// DefaultEfficiency returns the published efficiency of class k (EffGEMM,
// EffGEMMFP8, EffFlash, EffMemory or EffDepthwise); 0 for an unknown
// class.
func DefaultEfficiency(k Class) float64 {
	switch k {
	case Flash:
		return EffFlash
	case MemoryBound:
		return EffMemory
	case Grouped:
		return EffDepthwise
	case TensorFP8:
		return EffGEMMFP8
	case TensorFP16, TensorBF16, TensorTF32, CUDACore:
		return EffGEMM
	}
	return 0
}

// ParseClass returns the class called s.
func ParseClass(s string) (Class, error) { return parseName("operator class", s, Classes) }

// index returns k's position in Classes, −1 for none.
func index(k Class) int {
	for i, c := range Classes {
		if c == k {
			return i
		}
	}
	return -1
}

// Of returns class k's efficiency: e's figure, or the default where e
// gives none.
func (e *Efficiencies) Of(k Class) float64 {
	if v, ok := e.fitted(k); ok {
		return v
	}
	return DefaultEfficiency(k)
}

// fitted returns e's figure for class k and whether e gives one.
func (e *Efficiencies) fitted(k Class) (float64, bool) {
	if i := index(k); e != nil && i >= 0 && e.E[i] > 0 {
		return e.E[i], true
	}
	return 0, false
}

// Set sets class k's efficiency to v (0 for the default).
func (e *Efficiencies) Set(k Class, v float64) {
	if i := index(k); i >= 0 {
		e.E[i] = v
	}
}

// eff returns the efficiency c uses for class k: its calibration's
// figure where c.Eff gives one, else the device's published one
// (DeviceEfficiency).
func (c *Config) eff(k Class) float64 {
	if v, ok := c.Eff.fitted(k); ok {
		return v
	}
	return DeviceEfficiency(c.Device, k)
}

// DeviceEfficiency returns class k's published efficiency on d, a
// calibration's starting point and what a class it does not determine
// keeps: DefaultEfficiency(k), where the catalogue measured d's large
// products on its tensor cores (hw.Device.GEMMEfficiency) a tensor-core
// class's scaled by that figure over EffGEMM, the A100 figure the
// defaults rest on, and where it measured them on its CUDA cores the
// CUDA-core class's that figure.
func DeviceEfficiency(d *hw.Device, k Class) float64 {
	def := DefaultEfficiency(k)
	switch k {
	case TensorFP16, TensorBF16, TensorTF32, TensorFP8:
		if d != nil && d.GEMMEfficiency.Tensor > 0 {
			return def * d.GEMMEfficiency.Tensor / EffGEMM
		}
	case CUDACore:
		if d != nil && d.GEMMEfficiency.CUDA > 0 {
			return d.GEMMEfficiency.CUDA
		}
	}
	return def
}

// eager reports whether c's framework mode is eager, the default.
func (c *Config) eager() bool { return c.Mode == Eager || c.Mode == "" }

// launch returns the host's cost of one kernel under c: the calibrated
// figure, else in eager mode its host's (eagerLaunch), else the mode's.
func (c *Config) launch() units.Seconds {
	if c.Eff != nil && c.Eff.Launch > 0 {
		return c.Eff.Launch
	}
	if c.eager() {
		return c.eagerLaunch()
	}
	return c.Mode.Launch()
}

// libraryLaunch returns the host's cost under c of a kernel that a
// library launches inside an operator already dispatched: cuDNN's
// transposes of an NCHW tensor-core convolution (TransposeKernels), which
// PyTorch's at::cudnn_convolution calls as one operator
// (aten/src/ATen/native/cudnn/ConvShared.cpp), so that they pass through
// no Python, dispatcher or autograd of their own. With a calibrated
// launch or a host's measured one (HostCosts.Kernel), each the cost of a
// dispatched operator's kernel (the latter in eager mode, where it
// applies), such a kernel costs a bare launch, LaunchKernel; with the
// published figures, launch() like every kernel.
func (c *Config) libraryLaunch() units.Seconds {
	if c.Eff != nil && c.Eff.Launch > 0 {
		return LaunchKernel
	}
	if c.host().Kernel > 0 && c.eager() {
		return LaunchKernel // the host measured its own dispatched kernel
	}
	return c.launch()
}

// Launches returns the host's time under c issuing op's kernels: its
// dispatched ones at a launch each (a calibration's, else in eager mode
// the host's measured cuda_op, HostCosts.Kernel, else the mode's
// Mode.Launch), and those a library launches inside it at a bare launch
// where the dispatched figure was measured:
//
//	(Kernels(op) − lib)·launch + lib·libraryLaunch,  lib = TransposeKernels or 0
func (c *Config) Launches(op *model.Op) units.Seconds {
	return launchTime(c.Kernels(op), c.libraryKernels(op), c.launch(), c.libraryLaunch())
}

// libraryKernels returns how many of op's kernels a library launches
// itself (cuDNN's transposes of a convolution in NCHW): TransposeKernels
// or 0.
func (c *Config) libraryKernels(op *model.Op) int {
	if c.transposed(op) {
		return TransposeKernels
	}
	return 0
}

// launchTime is the host's time issuing kernels of which lib a library
// launches itself, at launch each and library each of those.
func launchTime(kernels, lib int, launch, library units.Seconds) units.Seconds {
	return units.Seconds(kernels-lib)*launch + units.Seconds(lib)*library
}

// kernelTime returns the device's time per kernel beyond the roofline
// under c: a calibration's KernelTime, else in eager mode the published
// KernelTime, else 0 (a compiled program's kernels are not the operators'
// list; docs/compute-calibration.md).
func (c *Config) kernelTime() units.Seconds {
	if k := effKey(c.Eff).KernelTime; k > 0 || !c.eager() {
		return k
	}
	return KernelTime
}

// ClassOf returns the class whose efficiency bounds op under c: the
// tensor-core class of the precision for a dense product, convolution or
// unfused attention (CUDACore at fp32), Flash for a fused attention,
// Grouped (of the bandwidth) for a grouped convolution, and CUDACore for
// the rest and for an operator autocast runs in float32.
func (c *Config) ClassOf(op *model.Op) Class {
	if op.Float32 && c.autocasts() {
		return CUDACore
	}
	switch op.Kind {
	case model.MatMul, model.Conv:
		return tensorClass(c.Precision)
	case model.Attention:
		if c.FusedAttention {
			return Flash
		}
		return tensorClass(c.Precision)
	case model.GroupedConv:
		return Grouped
	}
	return CUDACore
}

// tensorClass returns the class of a dense product at precision p.
func tensorClass(p hw.Precision) Class {
	switch p {
	case hw.FP16:
		return TensorFP16
	case hw.BF16:
		return TensorBF16
	case hw.TF32:
		return TensorTF32
	case hw.FP8:
		return TensorFP8
	}
	return CUDACore
}

// terms is one operator's time as a function of the efficiencies:
//
//	t(e) = max(comp/e[class], mem/e_mem) + extra/e_mem
//
// with comp and mem its compute and memory terms at efficiency 1 and
// extra the memory time of kernels that run after it (an unfused
// attention's softmax, an NCHW convolution's transposes).
type terms struct {
	class            int
	comp, mem, extra float64
}

// huge is an efficiency that makes a term vanish: 1e30 times faster.
const huge = 1e30

// decompose returns op's terms under c, found from opTime itself at four
// sets of efficiencies, so that every mechanism of opTime of that form is
// captured; ok is false where the terms do not reproduce opTime at c's
// efficiencies (an operator of another form), which Profile then times
// directly.
func decompose(c *Config, op *model.Op) (terms, bool) {
	k := c.ClassOf(op)
	at := func(ek, em float64) float64 {
		d := *c
		var e Efficiencies
		for i := range e.E {
			e.E[i] = huge
		}
		e.Set(k, ek)
		e.Set(MemoryBound, em)
		d.Eff = &e
		return float64(opTime(&d, op))
	}
	t := terms{class: index(k)}
	t.comp = at(1, huge)
	memAll := at(huge, 1) // mem + extra
	if t.comp > 0 {
		// With the arithmetic ten times the memory time, t = 10·memAll + extra.
		t.extra = max(at(t.comp/(10*max(memAll, 1e-300)), 1)-10*memAll, 0)
	}
	t.mem = max(memAll-t.extra, 0)
	want := float64(opTime(c, op))
	got := t.time(c.eff(k), c.eff(MemoryBound))
	return t, math.Abs(got-want) <= 1e-9*math.Max(want, 1e-12)
}

// time returns the terms' time at arithmetic efficiency ek and memory
// efficiency em.
func (t terms) time(ek, em float64) float64 {
	return math.Max(t.comp/ek, t.mem/em) + t.extra/em
}

// Profile is a step's forward and backward operators on one device,
// precision, mode and layout, decomposed so that their time under any
// Efficiencies is found without regenerating them: a calibration's fit
// evaluates it many times.
type Profile struct {
	cfg   Config
	ops   []model.Op // the forward and backward operators
	terms []terms    // ops[i]'s terms where ok[i]
	ok    []bool     // false: ops[i] is not of the terms' form, timed by opTime
	shape *stepShape // ops' shape under cfg, which no efficiency changes
}

// NewProfile returns the profile of ops' forward and backward operators
// (the optimizer's update is left out, as in StepTime.Compute) under c;
// c.Eff is ignored.
func NewProfile(c Config, ops []model.Op) (*Profile, error) {
	c.Eff = nil
	if err := c.check(); err != nil {
		return nil, err
	}
	p := &Profile{cfg: c}
	for i := range ops {
		o := &ops[i]
		if o.Pass != model.Forward && o.Pass != model.Backward {
			continue
		}
		t, ok := decompose(&c, o)
		p.ops, p.terms, p.ok = append(p.ops, *o), append(p.terms, t), append(p.ok, ok)
	}
	p.shape = c.shape(p.ops)
	return p, nil
}

// Time returns the profile's compute time under e, as Step's Compute
// gives it with Config.Eff = e: the device's and the host's times
// overlapped.
func (p *Profile) Time(e *Efficiencies) units.Seconds {
	c := p.cfg
	c.Eff = e
	var eff [numClasses]float64
	for i, k := range Classes {
		eff[i] = c.eff(k)
	}
	em := eff[index(MemoryBound)]
	s := c.stepShaped(p.ops, p.shape, func(i int) units.Seconds {
		if p.ok[i] {
			return units.Seconds(p.terms[i].time(eff[p.terms[i].class], em))
		}
		return opTime(&c, &p.ops[i])
	})
	return s.Compute()
}

// effKey returns e as a value for a law's cache key (zero for nil).
func effKey(e *Efficiencies) Efficiencies {
	if e == nil {
		return Efficiencies{}
	}
	return *e
}
