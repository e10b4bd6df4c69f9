package compute

import (
	"errors"
	"fmt"
	"sync"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// StepTime is the time of a step's operators under a Config.
type StepTime struct {
	// Forward and Backward are the passes' shares of the step's compute
	// time, Compute (the device's or the host's split, whichever
	// decides); Update is the device time of the optimizer's operators.
	Forward, Backward, Update units.Seconds
	// DeviceForward and DeviceBackward are the device time of the
	// passes' operators and of autocast's casts.
	DeviceForward, DeviceBackward units.Seconds
	// Host is the host's time issuing the step, by phase.
	Host HostTime
	// Launch is the kernels times the launch cost (c.launch), every pass.
	Launch units.Seconds
	// Sync says the host waits for the device within the step (the
	// gradient scaler's or the clipper's .item()).
	Sync bool
	// Syncs counts the operators after which the host waits for the
	// device (model.Op.Sync), and Waited is the time of the segments they
	// close (Step), part of Forward and Backward.
	Syncs  int
	Waited units.Seconds
	// Ops counts the operators.
	Ops int
}

// Compute returns Forward + Backward: a micro-batch's compute without the
// optimizer's device time.
func (s StepTime) Compute() units.Seconds { return s.Forward + s.Backward }

// Step returns the time of ops under c. The host issues the kernels ahead
// of the device, so that the two overlap: without a synchronisation the
// step takes
//
//	max(H_fwd + H_bwd + H_scaler + H_opt, D_fwd + D_bwd)
//
// and with the gradient scaler's, which waits for the device before the
// optimizer runs,
//
//	max(H_fwd + H_bwd + H_scaler, D_fwd + D_bwd) + H_opt
//
// (an input loader in the training process, H_load = b·LoaderHost under
// LawAt, joins H_opt in both forms: it overlaps the device's passes
// unless the step waits for the device at its end)
//
// with D the operators' device time (OpTime, autocast's casts, and a
// calibration's KernelTime per kernel) and H the host's (HostTime: each
// kernel's launch, those a library launches inside an operator at a bare
// launch where calibrated). In eager mode an operator that makes the host wait
// (model.Op.Sync; with Config.LossSync the last forward operator, the
// loss) ends a segment of the step (a graph executor or a
// compiled program keeps data-dependent work on the device): the host cannot issue what follows before
// the device has run what came before, so the step is
//
//	Σ_{k<S} ( max(H_k, D_k) + SyncLatency ) + the form above over the rest
//
// over the S segments its S syncs close, H_k and D_k the host's and the
// device's time of segment k's operators. An operator the host computes
// (model.Op.HostCPU, in every mode) is a segment of its own, closed by a
// sync, after a sync that closes the segment before it. The optimizer's
// device time, Update, is left to the simulator's update.
func Step(c *Config, ops []model.Op) (StepTime, error) {
	if err := c.check(); err != nil {
		return StepTime{}, err
	}
	return c.step(ops, func(i int) units.Seconds { return opTime(c, &ops[i]) }), nil
}

// segment is the host's and the device's time of the operators between
// two of a step's synchronisations, each split into the forward [0] and
// backward [1] passes.
type segment struct{ host, dev [2]units.Seconds }

// add adds the host time h and device time d of an operator of pass p.
func (g *segment) add(p model.Pass, h, d units.Seconds) {
	i := 0
	if p == model.Backward {
		i = 1
	}
	g.host[i] += h
	g.dev[i] += d
}

// stepShape is what step reads of a step's operators under a
// configuration that no efficiency changes: each operator's kernels
// (Config.Kernels) and, of them, those of a library's own launch
// (cuDNN's transposes, Config.Launches), its synchronisations, the
// operator after which the host reads the loss (−1 for none), the
// parameter tensors' sizes (paramSizes), autocast's weight casts
// (weightCasts) and BertAdam's kernels (bertAdamKernels). A Profile
// keeps it across a fit's evaluations.
type stepShape struct {
	kernels, lib  []int
	syncs, lossAt int
	sizes         []int64
	castKernels   int
	castBytes     units.Bytes
	bertAdam      int
}

// shape returns ops' stepShape under c.
func (c *Config) shape(ops []model.Op) *stepShape {
	sh := &stepShape{kernels: make([]int, len(ops)), lib: make([]int, len(ops)), syncs: model.Syncs(ops), lossAt: -1, sizes: paramSizes(ops)}
	for i := range ops {
		sh.kernels[i], sh.lib[i] = c.Kernels(&ops[i]), c.libraryKernels(&ops[i])
	}
	if c.LossSync {
		sh.lossAt = lastForward(ops)
	}
	sh.castKernels, sh.castBytes = weightCasts(ops)
	if c.Optimizer == model.BertAdam {
		sh.bertAdam = bertAdamKernels(ops)
	}
	return sh
}

// step is Step for a checked c, with ops[i]'s device time dev(i).
func (c *Config) step(ops []model.Op, dev func(i int) units.Seconds) StepTime {
	return c.stepShaped(ops, c.shape(ops), dev)
}

// stepShaped is step with ops' shape under c given.
func (c *Config) stepShaped(ops []model.Op, sh *stepShape, dev func(i int) units.Seconds) StepTime {
	var s StepTime
	kt, launchT, libT := c.kernelTime(), c.launch(), c.libraryLaunch()
	segs := make([]segment, 1, 2+sh.syncs)
	lossAt := sh.lossAt // the operator after which the host reads the loss
	for i := range ops {
		o := &ops[i]
		launch := launchTime(sh.kernels[i], sh.lib[i], launchT, libT)
		s.Launch += launch
		t := dev(i) + units.Seconds(sh.kernels[i])*kt
		if o.HostCPU > 0 && o.Pass != model.UpdatePass {
			s.hostOp(&segs, o, c.hostTime(o)+launch, t)
			continue
		}
		switch o.Pass {
		case model.Forward:
			h := launch
			if c.Mode == Eager && !o.Untracked {
				h += c.host().ModuleCall + c.host().AutogradRecord
			}
			s.DeviceForward += t
			s.Host.Forward += h
			segs[len(segs)-1].add(o.Pass, h, t)
		case model.Backward:
			s.DeviceBackward += t
			s.Host.Backward += launch
			segs[len(segs)-1].add(o.Pass, launch, t)
		default:
			s.Update += t
		}
		if (o.Sync || i == lossAt) && c.Mode == Eager && o.Pass != model.UpdatePass {
			s.Syncs++
			segs = append(segs, segment{})
		}
	}
	c.addCasts(&s, sh.castKernels, sh.castBytes, segs)
	sizes := sh.sizes
	c.addZeroGrad(&s, sizes, segs)
	switch c.Optimizer {
	case "":
	case model.BertAdam:
		s.Host.Optimizer = c.bertAdamHost(sh.bertAdam)
	default:
		s.Host.Optimizer = c.optimizerHost(sizes)
	}
	if c.GradScaler {
		before, after := c.scalerHost(sizes)
		s.Host.Scaler, s.Host.Optimizer, s.Sync = before, s.Host.Optimizer+after, true
	}
	if c.ClipNorm {
		before, after := c.clipHost(sizes)
		s.Host.Scaler, s.Host.Optimizer, s.Sync = s.Host.Scaler+before, s.Host.Optimizer+after, true
	}
	s.Host.Loader = c.loaderStep
	eff := effKey(c.Eff)
	s.Host.Step = eff.StepHost // a calibration's host cost per step
	if !eff.EventsInStepHost {
		s.Host.Step += units.Seconds(c.TimerEvents) * c.host().Event // the measuring program's events
	}
	segs[0].host[0] += s.Host.Step
	s.overlap(segs, c.syncLatency())
	s.Ops = len(ops)
	return s
}

// lastForward returns the index of the last forward operator of ops, −1
// for none.
func lastForward(ops []model.Op) int {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Pass == model.Forward {
			return i
		}
	}
	return -1
}

// hostTime returns the host's time of an operator it computes: its
// HostCPU, or its HostWork over c.HostCores where that is longer.
func (c *Config) hostTime(o *model.Op) units.Seconds {
	if c.HostCores > 0 && o.HostWork > 0 {
		return max(o.HostCPU, units.Seconds(float64(o.HostWork)/c.HostCores))
	}
	return o.HostCPU
}

// hostOp adds an operator the host computes (model.Op.HostCPU) for h, its
// launch included, to s, in every mode: a segment of its own, after the
// device has run what came before (its inputs reach the host) and before
// the device runs what follows (its outputs come back), each wait a sync.
// Its device time t (the copies' bytes on the device) is in the same
// segment.
func (s *StepTime) hostOp(segs *[]segment, o *model.Op, h, t units.Seconds) {
	if o.Pass == model.Backward {
		s.DeviceBackward += t
		s.Host.Backward += h
	} else {
		s.DeviceForward += t
		s.Host.Forward += h
	}
	s.Syncs += 2
	g := segment{}
	g.add(o.Pass, h, t)
	*segs = append(*segs, g, segment{})
}

// addCasts adds autocast's weight casts, k kernels of b bytes
// (weightCasts), to both passes of s: their device time and their
// launches, the forward ones in the first segment (autocast casts a
// weight at its first use) and the backward ones in the last.
func (c *Config) addCasts(s *StepTime, k int, b units.Bytes, segs []segment) {
	if !c.autocasts() {
		return
	}
	dev := units.Seconds(float64(b)/(float64(c.Device.MemoryBandwidth)*c.eff(MemoryBound))) + units.Seconds(k)*c.kernelTime()
	launch := units.Seconds(k) * c.launch()
	s.DeviceForward += dev
	s.DeviceBackward += dev
	s.Host.Forward += launch
	s.Host.Backward += launch
	s.Launch += 2 * launch
	segs[0].add(model.Forward, launch, dev)
	segs[len(segs)-1].add(model.Backward, launch, dev)
}

// overlap sets s's Forward and Backward from the segments' device and
// host times, as Step says: each segment a sync closes takes the longer
// of its two and sync (SyncLatency or the host's), the last the overlap
// of Step's first two forms. Each part is split between the passes as
// the device's times are when the device decides it and as the host's
// are when the host does.
func (s *StepTime) overlap(segs []segment, sync units.Seconds) {
	last := len(segs) - 1
	for _, g := range segs[:last] {
		f, b := split(g.host, g.dev, max(g.host[0]+g.host[1], g.dev[0]+g.dev[1])+sync)
		s.Forward += f
		s.Backward += b
		s.Waited += f + b
	}
	g := segs[last]
	host := g.host
	host[1] += s.Host.Scaler
	after := s.Host.Optimizer + s.Host.Loader
	if !s.Sync {
		host[1], after = host[1]+after, 0
	}
	f, b := split(host, g.dev, max(host[0]+host[1], g.dev[0]+g.dev[1])+after)
	s.Forward += f
	s.Backward += b
}

// split divides t between the passes: as dev divides when the device's
// time is the longer, as host divides otherwise.
func split(host, dev [2]units.Seconds, t units.Seconds) (fwd, bwd units.Seconds) {
	d, h := dev[0]+dev[1], host[0]+host[1]
	share := 0.0
	switch {
	case d >= h && d > 0:
		share = float64(dev[0] / d)
	case h > 0:
		share = float64(host[0] / h)
	}
	fwd = units.Seconds(share) * t
	return fwd, t - fwd
}

// storage returns the precision a step's tensors are stored in when its
// products compute at p (one of fp32, tf32, fp16, bf16, as Config.check
// accepts): TF32 rounds inside the tensor cores only, so its tensors are
// fp32; the others are stored as they compute.
func storage(p hw.Precision) model.Precision {
	if p == hw.TF32 {
		return model.FP32
	}
	return model.Precision(p)
}

// Law is the simulator's compute law of one device at a micro-batch b:
// b·PerSample + Fixed, with ForwardFraction of it in the forward pass.
type Law struct {
	PerSample, Fixed units.Seconds
	ForwardFraction  float64
}

// lawKey names a cached law: everything LawAt's result depends on.
type lawKey struct {
	model      string
	device     deviceKey
	host       HostCosts
	prec       hw.Precision
	mode       Mode
	nchw       bool
	fused      bool
	maskRoIs   int
	fuseBN     bool
	seqLen     int
	framework  string
	hostCores  float64
	loaderHost units.Seconds
	batch      int
	autocast   bool
	scaler     bool
	clipNorm   bool
	lossSync   bool
	zeroGrad   bool
	optimizer  model.Optimizer
	eff        Efficiencies
	events     int
}

// deviceKey is what a device gives a law: every figure of it that OpTime
// and Step read, so that two devices of one name and different figures
// (a catalogue's entry and an edited copy) do not share a cached law.
type deviceKey struct {
	name           string
	sms            int
	peak, fp32, bw float64
	conv           hw.ConvEfficiency
	gemm           hw.GEMMEfficiency
	winograd       hw.Winograd
	l2             units.BytesPerSec
	nchwNorm       float64
	misaligned     float64
	odd            float64
}

// keyOf returns d's deviceKey at precision p.
func keyOf(d *hw.Device, p hw.Precision) deviceKey {
	return deviceKey{d.Name, d.SMs, float64(d.PeakFLOPs(p)), float64(d.PeakFLOPs(hw.FP32)), float64(d.MemoryBandwidth),
		d.ConvEfficiency, d.GEMMEfficiency, d.Winograd, d.L2Bandwidth, d.NCHWBatchNorm, d.MisalignedGEMM, d.OddGEMM}
}

var (
	lawMu    sync.Mutex
	lawCache = map[lawKey]Law{}
)

// LawAt returns the law of model name (a model.OpModels name) on c's
// device at micro-batch b, from the step's forward and backward
// operators (model.Ops) at b and 2b:
//
//	PerSample = (t(2b) − t(b))/b,  Fixed = 2·t(b) − t(2b)
//
// so that b·PerSample + Fixed = t(b). Where t grows faster than linearly
// (Fixed < 0) or not at all, the law is t(b)/b per sample with no fixed
// part. A transformer's attention is fused where c.FusedAttention or its
// shape says so (model.Shape.FusedAttention). The
// result is cached per model, device (every figure the operators' times
// read), host costs, precision, mode, layout, attention, mask RoIs, sequence length, batch,
// autocast, scaler, clipping, optimizer, efficiencies and timer events. It
// returns an error wrapping ErrNoModel when the device has no SM count or
// the model no generator.
func LawAt(c Config, name string, b int) (Law, error) {
	if err := c.check(); err != nil {
		return Law{}, err
	}
	if b < 1 {
		return Law{}, fmt.Errorf("model %s: batch %d: want at least 1", name, b)
	}
	key := lawKey{name, keyOf(c.Device, c.Precision), *c.host(), c.Precision, c.Mode, c.NCHW, c.FusedAttention, c.MaskRoIs, c.FuseBNReLU, c.SeqLen, c.Framework, c.HostCores, c.LoaderHost, b, c.Autocast, c.GradScaler, c.ClipNorm, c.LossSync, c.ZeroGrad, c.Optimizer, effKey(c.Eff), c.TimerEvents}
	lawMu.Lock()
	l, ok := lawCache[key]
	lawMu.Unlock()
	if ok {
		return l, nil
	}
	l, err := law(c, name, b)
	if err != nil {
		return Law{}, err
	}
	lawMu.Lock()
	lawCache[key] = l
	lawMu.Unlock()
	return l, nil
}

// law is LawAt without the cache.
func law(c Config, name string, b int) (Law, error) {
	sp := storage(c.Precision)
	if !hasGenerator(name) {
		return Law{}, fmt.Errorf("%w: model %s has no operator generator", ErrNoModel, name)
	}
	if t, err := model.ProgramTransformer(name, c.Framework); err == nil {
		c.FusedAttention = c.FusedAttention || t.FusedAttention
	}
	at := func(n int) (StepTime, error) {
		ops, err := model.Ops(name, model.Shape{Batch: n, Precision: sp, SeqLen: c.SeqLen, Framework: c.Framework, Fused: c.Mode == Compiled, FusedAttention: c.FusedAttention, MaskRoIs: c.MaskRoIs, FuseBNReLU: c.FuseBNReLU})
		if err != nil {
			return StepTime{}, err
		}
		c.loaderStep = units.Seconds(n) * c.LoaderHost
		return Step(&c, ops)
	}
	s1, err := at(b)
	if err != nil {
		return Law{}, err
	}
	s2, err := at(2 * b)
	if err != nil {
		return Law{}, err
	}
	t1, t2 := s1.Compute(), s2.Compute()
	if !(t1 > 0) {
		return Law{}, errors.New("model " + name + ": a step of no time")
	}
	l := Law{PerSample: (t2 - t1) / units.Seconds(b), Fixed: 2*t1 - t2, ForwardFraction: float64(s1.Forward / t1)}
	if !(l.ForwardFraction > 0 && l.ForwardFraction < 1) {
		l.ForwardFraction = 0 // the simulator's default
	}
	if !(l.Fixed >= 0) || !(l.PerSample > 0) {
		l.PerSample, l.Fixed = t1/units.Seconds(b), 0
	}
	return l, nil
}

// hasGenerator reports whether name has an operator generator.
func hasGenerator(name string) bool {
	for _, n := range model.OpModels() {
		if n == name {
			return true
		}
	}
	return false
}

// Covers reports whether the operator model predicts name on d: d gives
// its SM count and name has an operator generator.
func Covers(d *hw.Device, name string) bool {
	return d != nil && d.SMs > 0 && hasGenerator(name)
}
