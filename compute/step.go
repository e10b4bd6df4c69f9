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
	// gradient scaler's .item()).
	Sync bool
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
// with D the operators' device time (OpTime, autocast's casts) and H the
// host's (HostTime). The optimizer's device time, Update, is left to the
// simulator's update.
func Step(c *Config, ops []model.Op) (StepTime, error) {
	if err := c.check(); err != nil {
		return StepTime{}, err
	}
	return c.step(ops, func(i int) units.Seconds { return opTime(c, &ops[i]) }), nil
}

// step is Step for a checked c, with ops[i]'s device time dev(i).
func (c *Config) step(ops []model.Op, dev func(i int) units.Seconds) StepTime {
	var s StepTime
	l := c.launch()
	for i := range ops {
		o := &ops[i]
		launch := units.Seconds(c.Kernels(o)) * l
		s.Launch += launch
		t := dev(i)
		switch o.Pass {
		case model.Forward:
			s.DeviceForward += t
			s.Host.Forward += launch
			if c.Mode == Eager {
				s.Host.Forward += ModuleCall + AutogradRecord
			}
		case model.Backward:
			s.DeviceBackward += t
			s.Host.Backward += launch
		default:
			s.Update += t
		}
	}
	c.addCasts(&s, ops)
	sizes := paramSizes(ops)
	if c.Optimizer != "" {
		s.Host.Optimizer = c.optimizerHost(sizes)
	}
	if c.GradScaler {
		before, after := c.scalerHost(sizes)
		s.Host.Scaler, s.Host.Optimizer, s.Sync = before, s.Host.Optimizer+after, true
	}
	s.Host.Step = effKey(c.Eff).StepHost // a calibration's host cost per step
	s.overlap()
	s.Ops = len(ops)
	return s
}

// addCasts adds autocast's weight casts (weightCasts) to both passes of s:
// their device time and their launches.
func (c *Config) addCasts(s *StepTime, ops []model.Op) {
	if !c.autocasts() {
		return
	}
	k, b := weightCasts(ops)
	dev := units.Seconds(float64(b) / (float64(c.Device.MemoryBandwidth) * c.eff(MemoryBound)))
	launch := units.Seconds(k) * c.launch()
	s.DeviceForward += dev
	s.DeviceBackward += dev
	s.Host.Forward += launch
	s.Host.Backward += launch
	s.Launch += 2 * launch
}

// overlap sets s's Forward and Backward from its device and host times,
// as Step says, split between the passes as the device's times are when
// the device decides and as the host's are when the host does.
func (s *StepTime) overlap() {
	dev := s.DeviceForward + s.DeviceBackward
	host := s.Host.Step + s.Host.Forward + s.Host.Backward + s.Host.Scaler
	after := s.Host.Optimizer
	if !s.Sync {
		host, after = host+after, 0
	}
	total := max(dev, host) + after
	share := 0.0
	switch {
	case dev >= host && dev > 0:
		share = float64(s.DeviceForward / dev)
	case host > 0:
		share = float64((s.Host.Step + s.Host.Forward) / host)
	}
	s.Forward = units.Seconds(share) * total
	s.Backward = total - s.Forward
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
	model, device  string
	sms            int
	peak, fp32, bw float64
	prec           hw.Precision
	mode           Mode
	nchw           bool
	seqLen         int
	batch          int
	autocast       bool
	scaler         bool
	optimizer      model.Optimizer
	eff            Efficiencies
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
// part. c.FusedAttention is taken from the model's transformer shape. The
// result is cached per model, device, precision, mode, layout, sequence
// length, batch, autocast, scaler, optimizer and efficiencies. It
// returns an error wrapping ErrNoModel when the device has no SM count or
// the model no generator.
func LawAt(c Config, name string, b int) (Law, error) {
	if err := c.check(); err != nil {
		return Law{}, err
	}
	if b < 1 {
		return Law{}, fmt.Errorf("model %s: batch %d: want at least 1", name, b)
	}
	d := c.Device
	key := lawKey{name, d.Name, d.SMs, float64(d.PeakFLOPs(c.Precision)), float64(d.PeakFLOPs(hw.FP32)), float64(d.MemoryBandwidth), c.Precision, c.Mode, c.NCHW, c.SeqLen, b, c.Autocast, c.GradScaler, c.Optimizer, effKey(c.Eff)}
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
	if t, err := model.LookupTransformer(name); err == nil {
		c.FusedAttention = t.FusedAttention
	}
	at := func(n int) (StepTime, error) {
		ops, err := model.Ops(name, model.Shape{Batch: n, Precision: sp, SeqLen: c.SeqLen})
		if err != nil {
			return StepTime{}, err
		}
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
