#!/usr/bin/python3
"""Side-by-side training throughput of scaleplan's engine and PyTorch on the CPU.

For each round and each batch size, this script measures one configuration
with the engine (by running `scaleplan bench throughput` as a subprocess
and reading its bench log) and then the same configuration with PyTorch
(in this process), so that the two alternate: engine, torch, engine,
torch, ...  On a shared, noisy machine the medians over the rounds are
then comparable, since both saw the same spells of load.

Both sides train the same network with the same step:

  mlp  784-1024-1024-10, ReLU between the dense layers
  cnn  conv 3x3 1->32, ReLU, conv 3x3 32->64, max-pool 2x2, ReLU,
       dense 9216->128, ReLU, dense 128->10   (valid padding, stride 1)

  one step = zero gradients, forward, softmax cross-entropy, backward,
             SGD(lr 0.01, momentum 0.9, weight decay 1e-4) update

on Fashion-MNIST batches (random shuffles of the training set; the engine
reads them through its prefetching loader, PyTorch indexes a tensor that
holds the whole set), single process, one worker, `--threads` threads
(torch.set_num_threads; the engine's goroutines follow GOMAXPROCS, which
is the machine's cores, 2 here). Throughput is batch / mean step time of
the timed steps, after untimed warm-up steps.

OpenBLAS picks its kernels when it loads, from OPENBLAS_CORETYPE; the
script sets it (default SkylakeX) and re-executes itself if it was not
set, so that PyTorch and the engine (built with -tags openblas) both see
it. Debian's python3-torch is at /usr/bin/python3; run with that
interpreter. It also sets OMP_WAIT_POLICY=PASSIVE unless the environment
sets it (OpenMP's default spin-wait collapses under load), and the
table's header line says which policy ran.

Usage (from the repository root; see engine/compare/README.md):

  go build -tags openblas -o /tmp/scaleplan-openblas .
  /usr/bin/python3 engine/compare/compare.py --scaleplan /tmp/scaleplan-openblas --model mlp
"""

import argparse
import gzip
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

FMNIST = "/usr/share/datasets/fashion-mnist"
OPENBLAS_DIRS = {
    "openmp": "/usr/lib/x86_64-linux-gnu/openblas-openmp",
    "pthread": "/usr/lib/x86_64-linux-gnu/openblas-pthread",
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scaleplan", required=True, help="scaleplan binary to measure the engine with")
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--batches", default="16,32,64,128,256,512,1024", help="batch sizes, comma-separated")
    p.add_argument("--rounds", type=int, default=5, help="alternations per batch; medians are reported")
    p.add_argument("--steps", type=int, default=0,
                   help="timed steps per measurement; default clamp(4096/batch, 5, 40)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps before them")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--coretype", default="SkylakeX", help="OPENBLAS_CORETYPE for both sides")
    p.add_argument("--torch-blas-threads", type=int, default=0,
                   help="OPENBLAS_NUM_THREADS for PyTorch's BLAS; default 0: OpenBLAS's own default "
                        "(one thread per core, beside torch's OpenMP threads). The engine always runs "
                        "OpenBLAS single-threaded inside its own goroutines.")
    p.add_argument("--torch-openblas", choices=["openmp", "pthread", "system"], default="openmp",
                   help="which of Debian's OpenBLAS builds PyTorch loads: openmp (libopenblas0-openmp, "
                        "the default: its threads are PyTorch's OpenMP pool), pthread "
                        "(libopenblas0-pthread: a second thread pool beside PyTorch's), or system "
                        "(whatever the libopenblas.so.0 alternative points to); set with LD_LIBRARY_PATH")
    p.add_argument("--engine-openblas", choices=["openmp", "pthread", "system"], default="pthread",
                   help="the same for the engine (a -tags openblas build); default pthread: the engine "
                        "calls single-threaded OpenBLAS from several goroutines at once, which the "
                        "OpenMP build serializes")
    p.add_argument("--torch-mkldnn", choices=["on", "off"], default="on",
                   help="PyTorch's oneDNN (MKL-DNN) convolutions: on (as installed) or off "
                        "(torch.backends.mkldnn.enabled = False: its im2col and BLAS path, the engine's algorithm)")
    p.add_argument("--data", default=FMNIST, help="Fashion-MNIST directory (IDX files, gzipped or not)")
    p.add_argument("--json", help="also write every measurement to this JSON file")
    return p.parse_args()


def read_idx(path):
    """Reads an IDX file (gzipped or not) as (dims, bytes)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        b = f.read()
    zero, kind, nd = struct.unpack(">HBB", b[:4])
    if zero != 0 or kind != 8:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * nd, b[4:4 + 4 * nd])
    return dims, b[4 + 4 * nd:]


def find(d, base):
    for name in (base + ".gz", base):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    raise FileNotFoundError(f"{d}: no {base} or {base}.gz")


def load_train(torch, d):
    dims, px = read_idx(find(d, "train-images-idx3-ubyte"))
    _, lb = read_idx(find(d, "train-labels-idx1-ubyte"))
    x = torch.frombuffer(bytearray(px), dtype=torch.uint8).reshape(dims[0], 1, dims[1], dims[2]).float().div_(255)
    y = torch.frombuffer(bytearray(lb), dtype=torch.uint8).long()
    return x, y


def torch_model(torch, name):
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(inplace=True),
                             nn.Linear(1024, 1024), nn.ReLU(inplace=True), nn.Linear(1024, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(inplace=True), nn.Conv2d(32, 64, 3),
                         nn.MaxPool2d(2), nn.ReLU(inplace=True), nn.Flatten(),
                         nn.Linear(9216, 128), nn.ReLU(inplace=True), nn.Linear(128, 10))


def torch_measure(torch, x, y, model_name, batch, warmup, steps, seed):
    """Returns samples/s of `steps` timed training steps at `batch`."""
    torch.manual_seed(seed)
    model = torch_model(torch, model_name)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    n = x.shape[0]
    perm = torch.randperm(n)
    pos = 0
    times = []
    for s in range(warmup + steps):
        t0 = time.perf_counter()
        if pos + batch > n:
            perm, pos = torch.randperm(n), 0
        idx = perm[pos:pos + batch]
        pos += batch
        xb, yb = x[idx], y[idx]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        if s >= warmup:
            times.append(time.perf_counter() - t0)
    return batch / statistics.fmean(times)


def engine_measure(binary, model_name, batch, warmup, steps, data, seed, env):
    """Runs `scaleplan bench throughput` for one configuration and returns
    (samples/s, backend description) from its bench log."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log.jsonl")
        cmd = [binary, "bench", "throughput", "--model", model_name, "--workers", "1", "--batch", str(batch),
               "--steps", str(steps), "--warmup", str(warmup), "--data", data, "--seed", str(seed),
               "--out", log, "--format", "csv",
               # PyTorch has no such guard: both sides are measured in whatever state the
               # cores are in, and the alternation spreads that state over both.
               "--core-guard=false"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        with open(log) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    backend = recs[0]["machine"]["backend"]
    meas = [r for r in recs if r["kind"] == "measurement"]
    return meas[0]["samples_per_s"], backend


def openblas_dir(flag, variant):
    """Returns the directory holding the named OpenBLAS build, or "" for
    the system's choice; exits if the build is not installed."""
    if variant == "system":
        return ""
    d = OPENBLAS_DIRS[variant]
    if not os.path.exists(os.path.join(d, "libopenblas.so.0")):
        sys.exit(f"compare.py: {flag} {variant}: no {d}/libopenblas.so.0; "
                 f"install libopenblas0-{variant} or use {flag} system")
    return d


def main():
    args = parse_args()
    # OpenMP's default wait policy spins its idle threads, which collapses
    # under load on a shared machine (112 against 1,925 samples/s at batch
    # 64 with PASSIVE): threads that wait must sleep. A value the user set
    # is kept. libgomp reads it when it loads, with torch.
    want = {"OPENBLAS_CORETYPE": args.coretype, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    if args.torch_blas_threads > 0:
        want["OPENBLAS_NUM_THREADS"] = str(args.torch_blas_threads)
    torch_lib = openblas_dir("--torch-openblas", args.torch_openblas)
    if torch_lib:
        want["LD_LIBRARY_PATH"] = torch_lib
    engine_env = dict(os.environ, **want)
    engine_env.pop("LD_LIBRARY_PATH", None)
    engine_lib = openblas_dir("--engine-openblas", args.engine_openblas)
    if engine_lib:
        engine_env["LD_LIBRARY_PATH"] = engine_lib
    if any(os.environ.get(k) != v for k, v in want.items()):
        # OpenBLAS reads these when it loads, and the dynamic loader reads
        # LD_LIBRARY_PATH when the process starts: restart with them set.
        # The engine's process inherits them.
        os.environ.update(want)
        os.execv(sys.executable, [sys.executable] + sys.argv)
    import torch
    torch.set_num_threads(args.threads)
    torch.backends.mkldnn.enabled = args.torch_mkldnn == "on"
    x, y = load_train(torch, args.data)
    batches = [int(b) for b in args.batches.split(",")]
    res = {b: {"engine": [], "torch": []} for b in batches}
    backend = ""
    t_start = time.time()
    for r in range(args.rounds):
        for b in batches:
            steps = args.steps or max(5, min(40, round(4096 / b)))
            e, backend = engine_measure(args.scaleplan, args.model, b, args.warmup, steps, args.data, r + 1, engine_env)
            t = torch_measure(torch, x, y, args.model, b, args.warmup, steps, r + 1)
            res[b]["engine"].append(e)
            res[b]["torch"].append(t)
            print(f"round {r + 1} batch {b}: engine {e:.0f}, torch {t:.0f} samples/s", file=sys.stderr, flush=True)
    print(f"# {args.model}: engine ({backend}) vs torch {torch.__version__} "
          f"({args.threads} threads, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}), "
          f"OpenBLAS: torch {args.torch_openblas}, engine {args.engine_openblas}, "
          f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}, OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, oneDNN {args.torch_mkldnn}, "
          f"{args.rounds} alternating rounds, {time.time() - t_start:.0f} s")
    print()
    print("| batch | engine samples/s (median) | torch samples/s (median) | engine/torch |")
    print("|---:|---:|---:|---:|")
    for b in batches:
        e, t = statistics.median(res[b]["engine"]), statistics.median(res[b]["torch"])
        print(f"| {b} | {e:.0f} | {t:.0f} | {e / t:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "backend": backend, "torch": torch.__version__, "threads": args.threads,
                       "torch_blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", ""),
                       "coretype": os.environ["OPENBLAS_CORETYPE"], "omp_wait_policy": os.environ["OMP_WAIT_POLICY"], "torch_openblas": args.torch_openblas, "engine_openblas": args.engine_openblas, "torch_mkldnn": args.torch_mkldnn, "rounds": args.rounds,
                       "measurements": {str(b): v for b, v in res.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
