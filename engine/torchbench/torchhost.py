#!/usr/bin/env python3
"""Host cost per operator of eager PyTorch, measured on CPU tensors and on a CUDA device.

Times, on one-element CPU tensors (the kernel is a few nanoseconds, so what
is left is the host's work), what compute/host.go charges per operator:

  dispatch         one small operator (add, mul, relu: the median), Python
                   binding and dispatcher, less the timing loop's own cost
  autograd_record  the same operators on a tensor that requires a gradient,
                   less dispatch (autograd's node and its edges)
  module_call      nn.Linear(1, 1)(x) less F.linear(x, w, b): the module's
                   __call__ and hooks around the same function
  autocast         a torch.mm of bfloat16 matrices inside a torch.autocast
                   region less one outside it (the region's entry and exit
                   cancel): autocast's wrapper on a listed operator whose
                   inputs need no cast
  foreach_call     one torch._foreach_add_ call's fixed cost, and
  foreach_tensor_cpu  its cost per tensor (a line through its times over 8
                   and 64 tensors)
  sgd_tensor       torch.optim's foreach step (SGD with momentum and weight
  adam_tensor      decay; Adam) per parameter tensor, less what its foreach
                   calls (*_foreach_calls) cost per tensor on the CPU (their
                   slow path runs an operator per tensor, which CUDA's
                   multi-tensor kernels do not): the Python bookkeeping per
                   tensor every device pays; *_step is the line's intercept
  scaler_tensor    GradScaler.unscale_ per parameter tensor, the same way
                   (its CUDA-only kernel replaced by one _foreach_mul_ and
                   its replicator's CUDA assertion dropped, on torch 1.x,
                   whose scaler has no CPU path); scaler_unscale the intercept

and, with a CUDA device (--device cuda, or auto where torch sees one), on
one-element tensors of the device:

  cuda_op          one small operator (add, mul, relu: the median) less the
                   timing loop's own cost: its dispatch and its kernel's
                   launch, each timing started on an idle device and short
                   enough (at most --cuda-number calls) that the launch
                   queue never fills, so that the host's time is what is
                   timed unless the device's kernel takes longer
  cuda_sync        torch.add followed by torch.cuda.synchronize() less
                   torch.add alone, paired: what a synchronisation adds to
                   the step
  cuda_event       a timing event made and recorded on the stream
                   (torch.cuda.Event(enable_timing=True).record()), as a
                   program that times its steps with CUDA events does

An absolute figure is a median over `--repeats` timings of `--number` calls,
the table keeping the least of `--rounds` such medians (the least disturbed
round on a shared machine); a difference is the median of rounds·repeats
pairs timed back to back. Run with OMP_WAIT_POLICY=PASSIVE and one thread:

  OMP_WAIT_POLICY=PASSIVE python3 scripts/torchhost.py > table.csv
"""

import argparse
import collections
import os
import platform
import statistics
import sys
import time
import timeit

import torch
import torch.nn.functional as F


def per_call(t, number, repeats):
    """Median seconds per execution of timer t over repeats timings."""
    return statistics.median(t.timeit(number) / number for _ in range(repeats))


def measure(stmt, env, args, setup="pass"):
    """Minimum over rounds of per_call's median, microseconds; a timing
    runs stmt --number times or, where that would pass --budget seconds,
    fewer (at least 1), after setup."""
    t = timeit.Timer(stmt, setup=setup, globals=env)
    once = t.timeit(10) / 10
    number = max(1, min(args.number, int(args.budget / max(once, 1e-9))))
    return 1e6 * min(per_call(t, number, args.repeats) for _ in range(args.rounds))


def difference(a, b, env, args, setup="pass"):
    """Median over rounds·repeats paired timings of stmt a less stmt b,
    microseconds, each after setup: each pair timed back to back, so that
    a shared machine's load, which drifts over seconds, falls on both."""
    ta, tb = timeit.Timer(a, setup=setup, globals=env), timeit.Timer(b, setup=setup, globals=env)
    once = max(ta.timeit(10), tb.timeit(10)) / 10
    n = max(1, min(args.number, int(args.budget / max(once, 1e-9))))
    diffs = [ta.timeit(n) / n - tb.timeit(n) / n for _ in range(args.rounds * args.repeats)]
    return 1e6 * statistics.median(diffs)


def elementwise(args):
    """dispatch and autograd_record, the medians over add, mul and relu."""
    a, b = torch.ones(1), torch.ones(1)
    ag = torch.ones(1, requires_grad=True)
    env = {"torch": torch, "a": a, "b": b, "ag": ag}
    loop = measure("pass", env, args)
    ops = ("torch.add(a, b)", "torch.mul(a, b)", "torch.relu(a)")
    rows = {"loop": loop, "dispatch": statistics.median(measure(op, env, args) - loop for op in ops)}
    rows["autograd_record"] = statistics.median(difference(op.replace("(a", "(ag"), op, env, args) for op in ops)
    return rows


def module(args):
    """module_call: nn.Linear's call less its function's."""
    lin = torch.nn.Linear(1, 1)
    env = {"F": F, "lin": lin, "x": torch.ones(1, 1), "w": lin.weight, "b": lin.bias}
    return {"module_call": difference("lin(x)", "F.linear(x, w, b)", env, args)}


def autocast(args):
    """autocast: a torch.mm of bf16 matrices inside autocast less outside."""
    env = {"torch": torch, "a": torch.ones(2, 2, dtype=torch.bfloat16)}
    env["on"] = torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    inside = "with on: torch.mm(a, a); torch.mm(a, a)"
    outside = "with on: torch.mm(a, a)\ntorch.mm(a, a)"
    return {"autocast": difference(inside, outside, env, args)}


Small, Large = 8, 64


def params(n):
    """n one-element parameters with gradients."""
    ps = [torch.nn.Parameter(torch.ones(1)) for _ in range(n)]
    for p in ps:
        p.grad = torch.ones(1)
    return ps


def line(small, large, env, args):
    """Intercept and slope of a cost over tensors, microseconds, through
    statement small's time (Small tensors) and large's (Large tensors),
    each measure's least median: a timing of a millisecond is preempted
    on a loaded machine, which a paired difference would keep."""
    ts, tl = measure(small, env, args), measure(large, env, args)
    b = (tl - ts) / (Large - Small)
    return ts - Small * b, b


def foreach(args):
    """The intercept and slope of one _foreach_add_ call over tensors."""
    env = {"torch": torch}
    for n in (Small, Large):
        env[f"x{n}"] = [torch.ones(1) for _ in range(n)]
        env[f"y{n}"] = [torch.ones(1) for _ in range(n)]
    return line(f"torch._foreach_add_(x{Small}, y{Small})", f"torch._foreach_add_(x{Large}, y{Large})", env, args)


def counting(fn, calls):
    """Wraps the foreach function fn to count its calls in calls."""
    def wrapped(*a, **k):
        calls[0] += 1
        return fn(*a, **k)
    return wrapped


def foreach_calls(run):
    """How many torch._foreach_* calls one run() makes."""
    calls = [0]
    saved = {n: getattr(torch, n) for n in dir(torch) if n.startswith("_foreach_")}
    for n, fn in saved.items():
        setattr(torch, n, counting(fn, calls))
    try:
        run()
    finally:
        for n, fn in saved.items():
            setattr(torch, n, fn)
    return calls[0]


def per_tensor(make, args, per_foreach):
    """Intercept and per-tensor slope of make(n)'s step, less its foreach
    calls' per-tensor slope, and the calls it makes."""
    env = {}
    for n in (Small, Large):
        run = make(n)
        run()  # state (momentum buffers, moments) made before timing
        env[f"run{n}"] = run
    calls = foreach_calls(env[f"run{Small}"])
    a, b = line(f"run{Small}()", f"run{Large}()", env, args)
    return a, b - calls * per_foreach, calls


def sgd(n):
    """A foreach SGD step with momentum and weight decay over n tensors."""
    return torch.optim.SGD(params(n), lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=True).step


def adam(n):
    """A foreach Adam step over n tensors."""
    return torch.optim.Adam(params(n), lr=1e-3, foreach=True).step


def cpu_scaler():
    """A GradScaler of CPU tensors and its module: torch.amp's (2.3 and
    later take a device), else torch.cuda.amp's told CUDA is there."""
    try:
        from torch.amp import grad_scaler as gs
        return gs, gs.GradScaler("cpu")
    except (ImportError, TypeError):
        from torch.cuda.amp import grad_scaler as gs
    absent = gs.amp_definitely_not_available
    gs.amp_definitely_not_available = lambda: False  # its host work on CPU tensors
    try:
        return gs, gs.GradScaler()
    finally:
        gs.amp_definitely_not_available = absent


def scaler(n):
    """GradScaler.unscale_ over n tensors, its kernel replaced (stand_in)."""
    opt = torch.optim.SGD(params(n), lr=0.1)
    gs, s = cpu_scaler()
    s._lazy_init_scale_growth_tracker(torch.device("cpu"))
    gs._MultiDeviceReplicator.__init__ = replicator  # it asserts CUDA tensors

    def run():
        s._per_optimizer_states = collections.defaultdict(gs._refresh_per_optimizer_state)
        s.unscale_(opt)
    return run


def replicator(self, master):
    """_MultiDeviceReplicator's constructor less its CUDA assertion."""
    self.master, self._per_device_tensors = master, {}


def stand_in(grads, found_inf, inv_scale):
    """CPU stand-in for _amp_foreach_non_finite_check_and_unscale_."""
    torch._foreach_mul_(grads, inv_scale.item())


def cuda(args):
    """cuda_op, cuda_sync and cuda_event on the CUDA device."""
    dev = torch.device("cuda")
    a, b = torch.ones(1, device=dev), torch.ones(1, device=dev)
    torch.cuda.synchronize()
    env = {"torch": torch, "a": a, "b": b}
    narrow = argparse.Namespace(**vars(args))
    narrow.number = min(args.number, args.cuda_number)
    idle = "torch.cuda.synchronize()"
    loop = measure("pass", env, narrow, setup=idle)
    ops = ("torch.add(a, b)", "torch.mul(a, b)", "torch.relu(a)")
    rows = {"cuda_op": statistics.median(measure(op, env, narrow, setup=idle) - loop for op in ops)}
    rows["cuda_sync"] = difference("torch.add(a, b); torch.cuda.synchronize()", "torch.add(a, b)", env, narrow, setup=idle)
    rows["cuda_event"] = measure("torch.cuda.Event(enable_timing=True).record()", env, narrow, setup=idle) - loop
    return rows


def cpu_model():
    """/proc/cpuinfo's model name and clock, or platform's."""
    name, mhz = platform.processor(), ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    name = v.strip()
                if k.strip() == "cpu MHz" and not mhz:
                    mhz = v.strip()
    except OSError:
        pass
    return name, mhz


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=2000, help="calls per timing")
    p.add_argument("--repeats", type=int, default=15, help="timings per median")
    p.add_argument("--budget", type=float, default=0.002, help="most seconds a timing takes")
    p.add_argument("--rounds", type=int, default=9, help="medians; the table keeps the least")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="cuda adds cuda_op, cuda_sync and cuda_event (auto: where torch sees a CUDA device)")
    p.add_argument("--cuda-number", type=int, default=500,
                   help="most calls per timing on the CUDA device, under its launch queue's depth")
    args = p.parse_args()
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    torch.set_num_threads(1)
    rows = elementwise(args)
    rows.update(module(args))
    rows.update(autocast(args))
    fa, fb = foreach(args)
    rows["foreach_call"], rows["foreach_tensor_cpu"] = fa, fb
    for name, make in (("sgd", sgd), ("adam", adam)):
        a, b, calls = per_tensor(make, args, fb)
        rows[name + "_step"], rows[name + "_tensor"], rows[name + "_foreach_calls"] = a, b, calls
    torch._amp_foreach_non_finite_check_and_unscale_ = stand_in
    a, b, _ = per_tensor(scaler, args, fb)
    rows["scaler_unscale"], rows["scaler_tensor"] = a, b
    if use_cuda:
        rows.update(cuda(args))
    name, mhz = cpu_model()
    print("# torch host cost per operator, microseconds (scripts/torchhost.py)")
    print(f"# torch {torch.__version__}, python {platform.python_version()}, {platform.machine()}")
    print(f"# cpu {name}, {mhz} MHz, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.2f}")
    if use_cuda:
        print(f"# cuda {torch.cuda.get_device_name()}, torch.version.cuda {torch.version.cuda}")
    print(f"# OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}, threads {torch.get_num_threads()}, "
          f"number {args.number} (budget {args.budget} s), repeats {args.repeats}, rounds {args.rounds}, "
          f"{time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}")
    print("quantity,value")
    for k, v in rows.items():
        print(f"{k},{v:.3f}" if isinstance(v, float) else f"{k},{v}")


if __name__ == "__main__":
    sys.exit(main())
