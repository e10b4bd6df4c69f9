// Package optim holds the optimizers and learning-rate schedules of the
// scaleplan reference training engine.
//
// # Overview
//
// An Optimizer updates a list of Groups, each a flat []float32 of
// parameters with its gradient, at the learning rate a Schedule gives for
// the step:
//
//	opt := optim.NewLARS()
//	sched := optim.MLPerfPolynomial(7.4, totalSteps, warmupSteps)
//	for s := 0; s < totalSteps; s++ {
//		// forward, backward: fill each group's Grads
//		opt.Step(groups, sched.LR(s))
//	}
//
// Optimizers keep their state per group, keyed by the group's index, and
// allocate it on the first step. A group marked Exclude (a bias or a
// batch-norm scale or shift) gets no weight decay and, under LARS, no trust
// ratio. Parameters and state are stored as float32; SGD computes in float32,
// as PyTorch does, LARS and Adam in float64.
// Settings and ScheduleSettings build optimizers and schedules from
// command-line values with errors instead of panics.
//
// # Optimizers
//
// Below w is a parameter, g its gradient, η_t the learning rate of step t
// (t = 1, 2, ...), λ the weight decay (0 for excluded groups), and all
// operations are element-wise.
//
// SGD follows torch.optim.SGD (PyTorch 2.x, torch/optim/sgd.py) exactly:
//
//	d = g + λ·w
//	b_1 = d;  b_t = μ·b_{t-1} + (1 − τ)·d              (if μ ≠ 0)
//	d = d + μ·b_t  (Nesterov)   or   d = b_t             (if μ ≠ 0)
//	w ← w − η_t·d
//
// with momentum μ and dampening τ; note that the first step stores the
// undampened gradient.
//
// LARS is layer-wise adaptive rate scaling (You, Gitman and Ginsburg 2017)
// in the form used by the MLPerf ResNet-50 results of seed 000 ("SGD with
// fast LARS"). For each group that is not excluded,
//
//	ρ = η_lars·‖w‖ / (‖g‖ + λ·‖w‖ + ε)   if ‖w‖ > 0 and ‖g‖ > 0, else ρ = 1
//	v ← μ_t·v + η_t·ρ·(g + λ·w)
//	w ← w − v
//
// with Euclidean norms over the whole group and v starting at 0. Excluded
// groups use ρ = 1 and λ = 0, so they take plain momentum steps. Without
// momentum correction μ_t = μ; with it (MomentumCorrection, on in NewLARS)
//
//	μ_t = μ·η_t/η_{t-1}   (t > 1)
//
// which keeps the velocity, already scaled by the rate, consistent when the
// rate changes (Goyal et al. 2017, "Accurate, Large Minibatch SGD", section
// 2.1). These equations are those of:
//
//   - tf.contrib.opt.LARSOptimizer as Google's MLPerf TensorFlow ResNet-50
//     code uses it (lars_util.py; lars_optimizer.py: compute_lr, then
//     training_ops.apply_momentum with rate 1 and gradient ρ·η·(g + λw)),
//     skip list ["batch_normalization", "bias"], ε = 0, no momentum
//     correction;
//   - NVIDIA's MXNet SGDwFASTLARS of the MLPerf v0.6 and v0.7 ResNet-50
//     submissions, which Fujitsu's GX2570 M5 result ran
//     (mlcommons/training_results_v0.7, Fujitsu/benchmarks/resnet/
//     implementations/implementation_closed/common/fit.py): multi_lars with
//     lars_eta = 0.001, lars_eps = 0, then sgd_mom_update
//     (state = μ·state + lr·(g + wd·w), w = w − state) with momentum
//     μ·cur_lr/last_lr. It skips LARS for names ending in gamma, beta or
//     bias, and applies weight decay to weights and the final
//     fully-connected layer's bias only; with Exclude covering both, this
//     package differs from it only in that one bias getting no decay.
//
// Adam follows torch.optim.Adam (amsgrad off); AdamW, Adam with Decoupled
// set, follows torch.optim.AdamW:
//
//	w ← w·(1 − η_t·λ)                     (AdamW only)
//	d = g + λ·w                           (Adam only)
//	m ← β1·m + (1 − β1)·d
//	v ← β2·v + (1 − β2)·d²
//	w ← w − η_t/(1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
//
// # Schedules
//
// A Schedule maps the 0-based step s (the number of updates already
// applied) to a rate. Every schedule multiplies its decay by an optional
// linear warm-up over w steps from a start factor f0:
//
//	f(s) = f0 + (1 − f0)·(s + 1)/w   (s < w),   1 otherwise
//
// Step-shaped decays (StepDecay, MultiStep, Exponential) count s from the
// start of training; Cosine and Polynomial decay over the T − w steps after
// warm-up, with progress p = clamp((s + 1 − w)/(T − w), 0, 1):
//
//	constant     base
//	step         base·γ^⌊s/k⌋
//	multistep    base·γ^(number of milestones ≤ s)
//	exponential  base·γ^(s/k)
//	cosine       end + (base − end)·(1 + cos πp)/2
//	poly         end + (base − end)·(1 − p)^power
//
// The MLPerf ResNet-50 schedule (seed 000: base 7.4, 2 warm-up epochs, 37
// epochs, power 2) is MLPerfPolynomial. NVIDIA's PolySchedule (same fit.py
// as above) computes, at MXNet's 1-based update count i = s + 1,
//
//	base·i/w                                      for i ≤ w
//	end + (base − end)·(1 − (i − w)/(T − w))²    otherwise, end = 1e-4
//
// which is Polynomial with f0 = 0, end = 1e-4 and power 2. Google's
// TensorFlow code (lars_util.py poly_rate_schedule) uses
// tf.train.polynomial_decay with its default end_learning_rate of 1e-4 and
// power 2.0 over train_steps − w_steps + 1 steps, so its last rate is just
// above 1e-4. Seed 000 gives only "polynomial, power 2"; the end rate of 1e-4 is
// both implementations' value.
//
// # Errors
//
// Programmer errors panic with messages starting "optim: ": params and
// grads of unequal length, groups that change between steps, a negative or
// non-finite learning rate, a negative step, Step on invalid settings.
// Validate methods, New and NewSchedule return errors wrapping ErrSettings
// for values out of range.
package optim
