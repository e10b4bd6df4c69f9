// Package fit fits the laws that calibrate the simulator to the records
// of training logs (read by package fit/logs): the throughput law per
// configuration, its fixed time across device counts, the steps-to-target
// curve, the latency–bandwidth line of nccl-tests' collectives, and the
// links of a network level that make a simulator's collective times match
// them (FitFabric).
//
// A fit whose v0, t, S_min or B_noise is not finite is a group error.
//
// # Throughput law
//
// A step on a batch of b samples (the global batch of a device group)
// takes a time that grows with b plus a fixed time t (gradients,
// averaging them across devices, the update), so the throughput is
//
//	v = b / (b/v0 + t),
//
// with v0 the throughput at infinite batch (seed 003). Throughput starts
// from the weighted linear regression
//
//	1/v = 1/v0 + t · (1/b),  weights v²,
//
// and refines (v0, t) by nonlinear least squares on v with weights 1/v̂²
// (relative errors, the noise of a throughput measurement being
// proportional to it), minimizing over (ln v0, t) with gonum's Newton
// method on the Gauss–Newton Hessian. v0 > 0 by construction; when the
// optimum has t < 0, t is held at 0 and v0 is the mean throughput. The
// covariance is
//
//	cov = s² (JᵀJ)⁻¹,  s² = Σ r_i² / (n − 2),  r_i = (v_i − v̂_i)/v̂_i,
//
// with J the Jacobian of v̂/v̂_i at the optimum, and the intervals are
// estimate ± t_{n−2}(1 − (1−level)/2) · √cov_jj (Student's t).
//
// When the step time does not grow with the batch by more than its
// scatter, the points do not bound v0: the regression's 1/v0 is not above
// its standard error (with two points, not above 0), least squares leaves
// v0 wherever it stopped, and ThroughputFit.V0Unbounded says so; only t is
// determined then. When 1/v0 is within t_{n−2}(1 − (1−level)/2) standard
// errors of 0, v0 has no upper limit and V0Interval is [smallest v0
// allowed, +Inf].
//
// # Points the law does not explain
//
// A drop at the largest batch from memory pressure, or a step that hit a
// slow node, must not bend the fit. For each batch size in turn, the
// points at that batch are left out and predicted from the rest; with m
// points at the batch, j their Jacobian row, h = j (JᵀJ)⁻¹ jᵀ and
// g = h/(1 − m h), the left-out residual and its standard deviation are
//
//	e_(i) = e_i + g Σ e,   s_(G) √(1 + g),
//	s²_(G) = (Σ_all e² − Σ_G e² − g (Σ_G e)²) / (n − m − 2),
//
// the exact group-deletion formulas of the linearized model. The point
// with the smallest two-sided p-value (Student's t, n − m − 2 degrees of
// freedom) is excluded if that p-value is below OutlierLevel/n (Bonferroni;
// default 1 % family-wise), and the fit and the test are repeated, while
// at most MaxExcluded (default 20 %) of the points are excluded and three
// or more batch sizes remain. Excluded points are reported, never dropped
// silently.
//
// # Repeated measurements
//
// When a batch size was measured more than once, the residual sum of
// squares splits into the repeats' scatter about their batch's mean and
// the distance of those means from the law, and the F test of the two
// (LackOfFit) says whether a low R² comes from the law or from the
// measurements.
//
// # Across device counts
//
// From fits at several device counts p of the same model and device kind,
// Comm separates the part of t that grows with p:
//
//	t(p) = t_fixed + 2(p−1)/p · t_comm,   t_comm = S/β,
//
// a ring all-reduce of a gradient of S bytes at effective bandwidth β
// (its latency term is absorbed). Two counts determine the line; more are
// fitted by least squares weighted by the inverse variances of t. Seed 003
// (t = 0.054 s on 1 GPU, 0.15 s on 2 GPUs without peer-to-peer) gives
// t_comm = 0.096 s, so β ≈ 1.06 GB/s for ResNet-50's 102 MB of fp32
// gradients.
//
// # Steps to target
//
// The steps to reach a target accuracy at global batch B follow
// (McCandlish et al. 2018)
//
//	S(B) = S_min · (1 + B_noise/B),
//
// fitted like the throughput law from the regression S = S_min +
// (S_min·B_noise)·(1/B). A batch is in the perfect-scaling regime when S(B)
// is within RegimeTolerance (20 %) of the line S_min·B_noise/B, that is
// B <= 0.2·B_noise; in the regime of maximal data parallelism when S(B) is
// within 20 % of S_min, that is B >= 5·B_noise; in between the returns
// diminish (seed 004). Runs that did not reach the target are kept and
// shown, not fitted.
//
// In epochs of N samples the same law is E(B) = S(B)·B/N =
// E_min·(1 + B/B_noise), E_min = S_min·B_noise/N: Epochs fits it as Steps
// on S = E·N/B, and Power fits the alternative E = A·B^K.
// LeaveOneGroupOut fits a law to every group of points but one (an MLPerf
// round) and predicts the one left out (docs/mlperf-epochs.md).
//
// # Links from collective tests
//
// FitFabric fits the bandwidth B and latency L of one level of a network
// to collective tests by inverting a model of their times, a FabricModel
// the caller builds around the simulator (fit does not import it):
//
//	minimise Σ ln²(T_model(B, L, S_i) / T_i)  over (ln B, ln L),
//
// by Nelder–Mead from the best point of a grid around the starting
// figures, restarted from each optimum until it stops improving; the
// intervals are Gauss–Newton ones. A parameter no time depends on is
// ErrUndetermined. FabricFit.Entry gives the calibration entry.
//
// # Calibration
//
// Report.Calibration gives a Calibration that calib.Calibration.WriteFile writes as
// YAML (atomically) and calib.Read reads back strictly, with every
// problem reported with its line.
//
// Nothing in the package reads the clock or a global random source: the
// same logs give the same bytes out.
package fit
