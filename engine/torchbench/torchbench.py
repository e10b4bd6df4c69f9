#!/usr/bin/env python3
"""torchbench: measure PyTorch training throughput and write a scaleplan bench log.

It trains for real (forward, loss, backward, optimizer step) on synthetic
data made on the device, or on images read from a folder, and writes one
JSON line per record in the format of scaleplan's internal/benchlog: a
header describing the machine and the run, then for every model,
precision and per-device batch a measurement record (mean and standard
deviation of the step time, samples per second, peak memory), or an oom
record for the first batch that did not fit, after which larger batches of
that model and precision are skipped. Optional step records give every
timed step.

It needs only torch and torchvision. With more than one worker (several
GPUs, or --nproc N on the CPU with the gloo backend) it relaunches itself
under torch.distributed.run (torchrun) and trains with
DistributedDataParallel; it also times steps under model.no_sync() to
estimate the all-reduce share of a step.

Across machines every node runs the same command but --node-rank, as with
torchrun's static rendezvous: node rank 0 hosts it at --master-addr and
--master-port, the world is --nodes x --nproc workers, and node rank 0
writes the log of all of them (the others write none).

    python3 torchbench.py --model resnet50 --batch 8,16,32,64 --precision fp32,amp-fp16 --out r50.jsonl
    python3 torchbench.py --list-models
    python3 torchbench.py --nodes 2 --node-rank 0 --master-addr 10.0.0.1 --nproc 4 --out r50-2x4.jsonl   # node 0
    python3 torchbench.py --nodes 2 --node-rank 1 --master-addr 10.0.0.1 --nproc 4                       # node 1

OMP_WAIT_POLICY is set to PASSIVE before torch is imported unless the
environment sets it (OpenMP's default spin-wait collapses under load on a
shared machine); the header's config records it as omp_wait_policy.

Progress goes to stderr. Records go to --out (written to a temporary file
and renamed at the end) or to stdout. Exit status: 0 when every
configuration was measured or ran out of memory, 1 when one failed for
another reason (the log still holds the others), 2 for a usage error, 3 when
torch or torchvision cannot be imported.
"""

import argparse
import contextlib
import datetime
import gc
import json
import math
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

TOOL = "torchbench"

# GPT_VOCAB and GPT_CONTEXT are GPT-3's vocabulary (GPT-2's BPE) and
# context (Brown et al. 2020, Section 2.1 and Table 2.1): the position table
# has GPT_CONTEXT rows whatever --seq-len, so the parameters are the
# published shape's.
GPT_VOCAB, GPT_CONTEXT = 50257, 2048
GPT_ABOUT = (", FFN 4d, GELU, pre-norm LayerNorm, learned positions, tied embeddings, vocabulary 50,257, "
             "dropout 0.1, AdamW; a sample is a sequence of --seq-len tokens")


def gpt_spec(title, layers, d, heads, head_note=""):
    """A GPT-3 shape's entry of MODELS: Brown et al. 2020, Table 2.1's row
    title with its layers, width and heads."""
    return dict(task="lm", image=None, channels=0, classes=0, conv=False, gpt=(layers, d, heads),
                about="GPT-3 %s (Brown et al. 2020, Table 2.1): %d layers, d %d, %d heads%s%s"
                      % (title, layers, d, heads, head_note, GPT_ABOUT))


# BERT_VOCAB and BERT_POSITIONS are BERT's uncased WordPiece vocabulary
# and its position table (google-research/bert, bert_config.json).
BERT_VOCAB, BERT_POSITIONS = 30522, 512
BERT_ABOUT = (" fine-tuned for SQuAD as DeepLearningExamples' run_squad.py builds it (modeling.py: "
              "BertForQuestionAnswering, no pooler): post-norm, query, key and value as three products, "
              "attention unfused with its scaling and padding mask as kernels of their own, GELU (erf) with "
              "FFN 4d, dropout 0.1, a d x 2 span head; AdamW; a sample is a sequence of --seq-len tokens "
              "(384 in run_squad.sh)")

# The models, by the names that scaleplan's model catalogue uses.
#   task:     classify (images → class), detect (Mask R-CNN), translate (Transformer),
#             lm (a GPT-3 shape: next-token prediction over one sequence),
#             qa (BERT fine-tuned for SQuAD: a span's start and end over one sequence)
#   bert:     a BERT shape's layers, width and heads
#   gpt:      a GPT-3 shape's layers, width and heads
#   image:    default input (height, width); None for the Transformer
#   channels: input channels
#   classes:  output classes
#   conv:     whether channels_last applies
MODELS = {
    "resnet50": dict(task="classify", image=(224, 224), channels=3, classes=1000, conv=True,
                     about="torchvision.models.resnet50, 224x224"),
    "resnet18": dict(task="classify", image=(224, 224), channels=3, classes=1000, conv=True,
                     about="torchvision.models.resnet18, 224x224 (use --image-size 64 for small tests)"),
    "efficientnet-b4": dict(task="classify", image=(380, 380), channels=3, classes=1000, conv=True,
                            about="torchvision.models.efficientnet_b4, 380x380"),
    "maskrcnn-r50-fpn": dict(task="detect", image=(800, 1344), channels=3, classes=91, conv=True,
                             about="torchvision Mask R-CNN ResNet-50-FPN (frozen BN, stem and layer1 frozen), 800x1344, "
                                   "4 synthetic boxes and masks per image"),
    "transformer-base": dict(task="translate", image=None, channels=0, classes=0, conv=False,
                             about="torch.nn.Transformer, d 512, 6+6 layers, 8 heads, FFN 2048, shared embeddings; a sample is a sentence pair"),
    "bert-base-squad": dict(task="qa", image=None, channels=0, classes=0, conv=False, bert=(12, 768, 12),
                            about="BERT-base (Devlin et al. 2019; 12 layers, d 768, 12 heads)" + BERT_ABOUT),
    "bert-large-squad": dict(task="qa", image=None, channels=0, classes=0, conv=False, bert=(24, 1024, 16),
                             about="BERT-large (Devlin et al. 2019; 24 layers, d 1024, 16 heads)" + BERT_ABOUT),
    "gpt3-125m": gpt_spec("Small", 12, 768, 12),
    "gpt3-350m": gpt_spec("Medium", 24, 1024, 16),
    "gpt3-760m": gpt_spec("Large", 24, 1536, 16),
    "gpt3-1.3b": gpt_spec("XL", 24, 2048, 16, " of 128"),
    "mlp": dict(task="classify", image=(28, 28), channels=1, classes=10, conv=False, fixed=True,
                about="784-1024-1024-10 ReLU MLP (scaleplan engine), 1x28x28"),
    "cnn": dict(task="classify", image=(28, 28), channels=1, classes=10, conv=True, fixed=True,
                about="conv 3x3x32, conv 3x3x64, max-pool 2x2, dense 128, dense 10 (scaleplan engine), 1x28x28"),
}

PRECISIONS = {
    "fp32": "FP32, TF32 off for matrix products and convolutions",
    "tf32": "FP32 storage, TF32 tensor-core matrix products and convolutions (CUDA, Ampere or newer)",
    "amp-fp16": "torch.autocast float16 with a GradScaler (CUDA)",
    "amp-bf16": "torch.autocast bfloat16 (CUDA with bf16 support, or CPU)",
}

DEFAULT_BATCHES_CUDA = [8, 16, 32, 64, 128, 256, 512, 1024]
DEFAULT_BATCHES_CPU = [1, 2, 4, 8, 16]

EXIT_FAILED, EXIT_USAGE, EXIT_NO_TORCH = 1, 2, 3

# torchrun's default --master_port (https://docs.pytorch.org/docs/stable/elastic/run.html).
DEFAULT_PORT = 29500

torch = None  # imported by import_torch, after the arguments are checked


RANK = 0  # this worker's rank; only rank 0 reports progress


class Interrupted(BaseException):
    """Raised by the SIGTERM and SIGINT handlers of a single worker, so that
    the measurements taken so far are written before the script exits. It
    is not an Exception, so a configuration's own error handling lets it
    through."""


def on_signal(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def progress(msg, always=False):
    if RANK == 0:
        print("torchbench: " + msg, file=sys.stderr, flush=True)
    elif always:
        print("torchbench: worker %d: %s" % (RANK, msg), file=sys.stderr, flush=True)


# ---------------------------------------------------------------- arguments


def int_list(s):
    out = []
    for part in s.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            v = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError("batch %r is not an integer" % part)
        if v <= 0:
            raise argparse.ArgumentTypeError("batch %d must be > 0" % v)
        out.append(v)
    if not out:
        raise argparse.ArgumentTypeError("empty batch list")
    return out


def name_list(valid, what):
    def parse(s):
        names = [p.strip() for p in s.split(",") if p.strip()]
        if not names:
            raise argparse.ArgumentTypeError("empty %s list" % what)
        for n in names:
            if n not in valid:
                raise argparse.ArgumentTypeError(
                    "unknown %s %r (valid: %s)" % (what, n, ", ".join(valid)))
        return names
    return parse


def make_parser():
    p = argparse.ArgumentParser(
        prog="torchbench",
        description="Measure PyTorch training throughput and write a scaleplan bench log (JSON lines).")
    p.add_argument("--model", type=name_list(list(MODELS), "model"), default=["resnet50"],
                   help="comma-separated models (default resnet50; --list-models lists them)")
    p.add_argument("--batch", type=int_list, default=None,
                   help="comma-separated per-device batches, swept in increasing order until the first "
                        "out-of-memory (default %s on CUDA, %s on the CPU)" % (
                            ",".join(map(str, DEFAULT_BATCHES_CUDA)), ",".join(map(str, DEFAULT_BATCHES_CPU))))
    p.add_argument("--precision", type=name_list(list(PRECISIONS), "precision"), default=["fp32"],
                   help="comma-separated precisions: %s (default fp32)" % ", ".join(PRECISIONS))
    p.add_argument("--steps", type=int, default=20, help="timed steps per configuration (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps per configuration (default 5)")
    p.add_argument("--channels-last", action="store_true",
                   help="use the channels_last memory format for convolutional models")
    p.add_argument("--compile", action="store_true", help="wrap the model in torch.compile (needs torch >= 2.0)")
    p.add_argument("--nproc", type=int, default=0,
                   help="data-parallel workers on this node (default: every visible GPU on CUDA, 1 on the CPU); "
                        "more than 1 runs DistributedDataParallel (nccl on CUDA, gloo on the CPU)")
    p.add_argument("--nodes", type=int, default=1,
                   help="machines that run this command together, each with its own --node-rank (default 1); "
                        "the world is --nodes x --nproc workers")
    p.add_argument("--node-rank", type=int, default=0,
                   help="this machine's rank, 0 to --nodes - 1 (default 0); node rank 0 hosts the rendezvous "
                        "and writes the log")
    p.add_argument("--master-addr", default="",
                   help="address of node rank 0 as every node reaches it; needed with several nodes "
                        "(default 127.0.0.1 on one)")
    p.add_argument("--master-port", type=int, default=0,
                   help="TCP port of the rendezvous on node rank 0 (default %d with several nodes, "
                        "torchrun's; a free port on one)" % DEFAULT_PORT)
    p.add_argument("--backend", choices=["auto", "nccl", "gloo"], default="auto",
                   help="torch.distributed backend (default auto: nccl on CUDA, gloo on the CPU)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where to train (default auto: cuda when available, else cpu)")
    p.add_argument("--image-size", type=int, default=0,
                   help="square input size for resnet50, resnet18, efficientnet-b4 and maskrcnn-r50-fpn "
                        "(default: the model's own); mlp and cnn always take 1x28x28")
    p.add_argument("--seq-len", type=int, default=128,
                   help="transformer-base source and target length, a GPT or BERT model's sequence, in tokens "
                        "(default 128; at most %d for GPT, %d for BERT; run_squad.sh's is 384)" % (GPT_CONTEXT, BERT_POSITIONS))
    p.add_argument("--vocab", type=int, default=33708,
                   help="transformer-base shared vocabulary (default 33708, MLPerf's En-De BPE)")
    p.add_argument("--data-dir", default="",
                   help="read images from this torchvision ImageFolder instead of synthetic data "
                        "(image classification models only)")
    p.add_argument("--loader-workers", type=int, default=2,
                   help="DataLoader worker processes per device with --data-dir (default 2)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads per worker for torch (default: OMP_NUM_THREADS if set, else on the CPU "
                        "the available cores divided by the workers; on CUDA torch's default)")
    p.add_argument("--step-records", action="store_true", help="also write a step record for every timed step")
    p.add_argument("--profile", action="store_true",
                   help="after each batch's timed steps, run PROFILE_STEPS more under torch.profiler and write its "
                        "per-operator table (key_averages: calls, CPU and device time, FLOPs per step) to OUT with "
                        ".profile.json for .jsonl; needs --out and one worker")
    p.add_argument("--no-host-costs", action="store_true",
                   help="on CUDA, do not measure the host's cost per operator (torchhost.py beside this script, a "
                        "few seconds after the sweep; a stop meanwhile drops the costs, not the log) into the header's "
                        "machine.host_costs")
    p.add_argument("--run", default="", help="run identifier written in every record (default torchbench-<UTC time>)")
    p.add_argument("--seed", type=int, default=1, help="seed for weights and synthetic data (default 1)")
    p.add_argument("--launcher", choices=["auto", "torchrun", "spawn"], default="auto",
                   help="how to start several workers: torch.distributed.run, or torch.multiprocessing.spawn "
                        "(default auto: torchrun when importable)")
    p.add_argument("--dist-timeout", type=float, default=600,
                   help="seconds a collective, or the rendezvous of several nodes, may wait for the other "
                        "workers before failing (default 600)")
    p.add_argument("--out", default="", help="write the records to this file (atomically) instead of stdout")
    p.add_argument("--list-models", action="store_true", help="print the models, one a line, and exit")
    p.add_argument("--list-precisions", action="store_true", help="print the precisions, one a line, and exit")
    return p


def check_args(p, a):
    """Checks what can be checked without torch; exits with status 2."""
    if a.steps < 1:
        p.error("--steps %d: must be >= 1" % a.steps)
    if a.warmup < 0:
        p.error("--warmup %d: must be >= 0" % a.warmup)
    if a.nproc < 0:
        p.error("--nproc %d: must be >= 0" % a.nproc)
    check_placement(p, a)
    if a.image_size != 0 and a.image_size < 32:
        p.error("--image-size %d: must be >= 32 (or 0 for the model's own)" % a.image_size)
    if a.seq_len < 1:
        p.error("--seq-len %d: must be >= 1" % a.seq_len)
    gpt = [m for m in a.model if MODELS[m]["task"] == "lm"]
    if gpt and a.seq_len > GPT_CONTEXT:
        p.error("--seq-len %d: at most %d tokens for %s (GPT-3's context)" % (a.seq_len, GPT_CONTEXT, ", ".join(gpt)))
    bert = [m for m in a.model if MODELS[m]["task"] == "qa"]
    if bert and a.seq_len > BERT_POSITIONS:
        p.error("--seq-len %d: at most %d tokens for %s (BERT's positions)" % (a.seq_len, BERT_POSITIONS, ", ".join(bert)))
    if a.vocab < 2:
        p.error("--vocab %d: must be >= 2" % a.vocab)
    if a.loader_workers < 0:
        p.error("--loader-workers %d: must be >= 0" % a.loader_workers)
    if a.threads < 0:
        p.error("--threads %d: must be >= 0" % a.threads)
    if a.dist_timeout <= 0:
        p.error("--dist-timeout %g: must be > 0" % a.dist_timeout)
    if a.data_dir:
        if not os.path.isdir(a.data_dir):
            p.error("--data-dir %s: not a directory" % a.data_dir)
        bad = [m for m in a.model if MODELS[m]["task"] != "classify"]
        if bad:
            p.error("--data-dir applies to image classification models only, not %s" % ", ".join(bad))
    if a.profile and not a.out:
        p.error("--profile: name the bench log with --out; the profile is written beside it")
    if a.profile and (a.nproc > 1 or a.nodes > 1):
        p.error("--profile: one worker only (--nproc 1, --nodes 1)")
    if a.batch is not None:
        a.batch = sorted(set(a.batch))
    a.model = list(dict.fromkeys(a.model))
    a.precision = list(dict.fromkeys(a.precision))


def check_placement(p, a):
    """Checks the nodes, the node rank, the rendezvous and the backend."""
    if a.nodes < 1:
        p.error("--nodes %d: must be >= 1" % a.nodes)
    if a.node_rank != 0 and a.nodes == 1:
        p.error("--node-rank %d: must be 0 on one node (--nodes N for more)" % a.node_rank)
    if not 0 <= a.node_rank < a.nodes:
        p.error("--node-rank %d: must be from 0 to %d, one less than --nodes %d" % (a.node_rank, a.nodes - 1, a.nodes))
    if not 0 <= a.master_port <= 65535:
        p.error("--master-port %d: must be from 1 to 65535 (or 0 for the default)" % a.master_port)
    if a.nodes > 1 and not a.master_addr:
        p.error("--nodes %d: --master-addr must name node rank 0 (its host name or IP address, "
                "as every node reaches it)" % a.nodes)
    if a.backend == "nccl" and a.device == "cpu":
        p.error("--backend nccl needs CUDA devices; on the CPU use gloo")


def passive_openmp():
    """Sets OMP_WAIT_POLICY=PASSIVE unless the environment sets it.

    OpenMP's default policy spins threads that wait for work, which
    collapses under load on a shared machine (112 against 1,925 samples/s
    at batch 64 with PASSIVE). libgomp reads the variable when it loads,
    with torch, so this runs before torch is imported; torchrun's and
    spawn's workers inherit it. The header's config records the policy.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def import_torch():
    global torch
    try:
        import torch as t
        import torchvision  # noqa: F401
    except ImportError as e:
        progress("cannot import torch and torchvision with %s (%s): install Debian's python3-torch and "
                 "python3-torchvision, or pip install torch torchvision" % (sys.executable, e))
        sys.exit(EXIT_NO_TORCH)
    torch = t


def check_torch_args(p, a):
    """Checks what needs torch; resolves the device and the worker count."""
    if a.device == "auto":
        a.device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch %s sees no CUDA device (torch.cuda.is_available() is false)" % torch.__version__)
    if a.compile and not hasattr(torch, "compile"):
        p.error("--compile needs torch >= 2.0 (torch.compile); this is torch %s" % torch.__version__)
    if a.device == "cpu":
        for prec in a.precision:
            if prec in ("tf32", "amp-fp16"):
                p.error("--precision %s needs a CUDA device; on the CPU use fp32 or amp-bf16" % prec)
    else:
        if "amp-bf16" in a.precision and not torch.cuda.is_bf16_supported():
            p.error("--precision amp-bf16: %s does not support bfloat16" % torch.cuda.get_device_name(0))
        if "tf32" in a.precision and torch.cuda.get_device_capability(0)[0] < 8:
            p.error("--precision tf32: %s has no TF32 tensor cores (needs compute capability 8.0 or newer)"
                    % torch.cuda.get_device_name(0))
    if a.nproc == 0:
        a.nproc = torch.cuda.device_count() if a.device == "cuda" else 1
    if a.device == "cuda" and a.nproc > torch.cuda.device_count():
        p.error("--nproc %d: only %d CUDA devices visible" % (a.nproc, torch.cuda.device_count()))
    if a.nproc * a.nodes > 1 and not torch.distributed.is_available():
        p.error("--nproc %d on %d nodes: this torch was built without torch.distributed" % (a.nproc, a.nodes))
    if a.backend == "auto":
        a.backend = "nccl" if a.device == "cuda" else "gloo"
    if a.backend == "nccl" and a.device != "cuda":
        p.error("--backend nccl needs CUDA devices; on the CPU use gloo")
    if a.nproc * a.nodes > 1 and a.backend == "nccl" and not torch.distributed.is_nccl_available():
        p.error("--backend nccl: this torch was built without NCCL; use gloo")
    if a.batch is None:
        a.batch = list(DEFAULT_BATCHES_CUDA if a.device == "cuda" else DEFAULT_BATCHES_CPU)


# ---------------------------------------------------------------- launching


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def default_threads(a, local):
    """Returns the threads of each of the local workers of this node."""
    if a.threads:
        return a.threads
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if a.device == "cpu":
        return max(1, available_cores() // local)
    return 0


def launch(a, argv):
    """Starts a.nproc workers running this script on this node and waits
    for them; with several nodes they meet the others' at the rendezvous
    of node rank 0."""
    threads = default_threads(a, a.nproc)
    child = list(argv) + ["--run", a.run, "--device", a.device, "--nproc", str(a.nproc)]
    if threads:
        child += ["--threads", str(threads)]
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)  # else torchrun sets 1 and says so
    launcher = a.launcher
    if launcher == "auto":
        try:
            import torch.distributed.run  # noqa: F401
            launcher = "torchrun"
        except ImportError:
            launcher = "spawn"
    env["TORCHBENCH_LAUNCHER"] = launcher
    addr = a.master_addr or "127.0.0.1"
    port = a.master_port or (DEFAULT_PORT if a.nodes > 1 else free_port())
    where = ""
    if a.nodes > 1:
        where = " as node %d of %d, rendezvous at %s:%d" % (a.node_rank, a.nodes, addr, port)
    progress("starting %d workers (%s, %s backend)%s" % (a.nproc, launcher, a.backend, where), always=True)
    if launcher == "torchrun":
        # The static rendezvous: node rank 0's agent serves it at
        # addr:port, every node waits there for the others up to
        # --dist-timeout, and a node's workers take the global ranks
        # node_rank x nproc onwards
        # (https://docs.pytorch.org/docs/stable/elastic/run.html).
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", str(a.nodes), "--node_rank", str(a.node_rank),
               "--nproc_per_node", str(a.nproc), "--master_addr", addr, "--master_port", str(port),
               "--rdzv_backend", "static", "--rdzv_conf", "timeout=%d" % max(1, math.ceil(a.dist_timeout))]
        if torchrun_std_bug():
            # torch 1.13 on Python 3.11 cannot parse torchrun's default
            # "--redirects 0" (enum.IntFlag no longer iterates its zero
            # member); tee the workers' stderr instead, which it can parse.
            cmd += ["--redirects", "2", "--tee", "2"]
        cmd += [os.path.abspath(__file__)] + child
        return launched(a, subprocess.call(cmd, env=env))
    import torch.multiprocessing as mp
    os.environ.update(env)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = addr, str(port)
    try:
        mp.spawn(spawned, args=(child, a.nproc, a.nodes, a.node_rank), nprocs=a.nproc, join=True)
    except mp.ProcessRaisedException as e:
        progress("a worker failed: %s" % e, always=True)
        return EXIT_FAILED
    except mp.ProcessExitedException as e:
        return e.exit_code or EXIT_FAILED
    return launched(a, 0)


def launched(a, code):
    """Returns the workers' exit status, saying on a node of rank above 0
    that node rank 0 writes the log."""
    if code == 0 and a.node_rank > 0:
        progress("node rank %d of %d: done; node rank 0 writes the log" % (a.node_rank, a.nodes), always=True)
    return code


def torchrun_std_bug():
    try:
        from torch.distributed.elastic.multiprocessing.api import Std
        return Std.from_str("0") is None
    except Exception:
        return False


def spawned(local_rank, argv, nproc, nodes, node_rank):
    os.environ.update(RANK=str(node_rank * nproc + local_rank), LOCAL_RANK=str(local_rank),
                      WORLD_SIZE=str(nodes * nproc), LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(node_rank))
    code = main(argv)
    if code:
        sys.exit(code)


# ---------------------------------------------------------------- machine


def available_cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def nvidia_driver():
    try:
        with open("/proc/driver/nvidia/version") as f:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9][0-9.]+)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return ""


def cpu_backend():
    parts = []
    if torch.backends.mkldnn.is_available():
        parts.append("mkldnn")
    m = re.search(r"BLAS_INFO=([\w-]+)", torch.__config__.show())
    if m:
        parts.append("blas " + m.group(1))
    return ", ".join(parts)


def machine(a, world):
    import torchvision
    m = dict(host=platform.node(), os=sys.platform, arch=platform.machine(), cpu=cpu_name(),
             cores=os.cpu_count() or 0,
             framework="torch %s torchvision %s" % (torch.__version__, torchvision.__version__))
    if a.device == "cuda":
        props = torch.cuda.get_device_properties(0)
        m.update(device_name=torch.cuda.get_device_name(0), device_count=torch.cuda.device_count(),
                 device_memory_bytes=float(props.total_memory), driver=nvidia_driver(),
                 cuda=torch.version.cuda or "")
        backend = []
        if torch.backends.cudnn.is_available():
            backend.append("cudnn %s" % torch.backends.cudnn.version())
        if world > 1:
            try:
                v = torch.cuda.nccl.version()  # a tuple, or an int such as 2708 before torch 1.11
                backend.append("nccl " + (".".join(map(str, v)) if isinstance(v, tuple) else str(v)))
            except Exception:
                backend.append("nccl")
        m["backend"] = ", ".join(backend)
    else:
        m.update(device_name="cpu", device_count=1, device_memory_bytes=float(host_memory()),
                 backend=cpu_backend())
    return {k: v for k, v in m.items() if v not in ("", 0, 0.0, None)}


# HOST_SCRIPT is the script beside this one that measures the host's cost
# per operator (scripts/torchhost.py links to it), and HOST_ROUNDS the
# medians it keeps the least of here: fewer than its own 9, a few seconds.
HOST_SCRIPT = "torchhost.py"
HOST_ROUNDS = 3


def host_costs():
    """The host's cost per operator of eager PyTorch, microseconds by
    quantity, with the CUDA device's (cuda_op, cuda_sync): HOST_SCRIPT in a
    process of its own, since it patches torch for its timings. None, with
    a progress line, where it cannot run."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), HOST_SCRIPT)
    if not os.path.exists(path):
        progress("no %s beside this script: the header holds no host costs" % HOST_SCRIPT)
        return None
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS="1")
    try:
        out = subprocess.run([sys.executable, path, "--device", "cuda", "--rounds", str(HOST_ROUNDS)],
                             capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError) as e:
        progress("host costs not measured: %s" % e)
        return None
    if out.returncode != 0:
        progress("host costs not measured: %s" % (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1])
        return None
    return parse_host_table(out.stdout)


def measure_host(a, dev, rank):
    """host_costs on rank 0 of a CUDA run, unless --no-host-costs. It runs
    under the sweep's signal handlers: a stop while the host is timed
    (Interrupted) kills the timing process and gives None, so that the log
    is written without the costs rather than not at all."""
    if rank != 0 or dev.type != "cuda" or a.no_host_costs:
        return None
    try:
        return host_costs()
    except Interrupted as e:
        progress("host costs not measured: interrupted by %s" % e)
        return None


def parse_host_table(text):
    """The quantity,value rows of a host table, by quantity; None without
    any."""
    rows, started = {}, False
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line == "quantity,value":
            started = True
            continue
        k, _, v = line.partition(",")
        if started and k:
            try:
                rows[k] = float(v)
            except ValueError:
                continue
    return rows or None


# ---------------------------------------------------------------- models


def tv_model(fn, **kw):
    """Calls a torchvision constructor without pretrained weights, old API or new."""
    try:
        return fn(weights=None, **kw)
    except TypeError:
        return fn(pretrained=False, **kw)


def build_model(name, a):
    import torch.nn as nn
    import torchvision
    spec = MODELS[name]
    if name == "resnet50":
        return tv_model(torchvision.models.resnet50, num_classes=spec["classes"])
    if name == "resnet18":
        return tv_model(torchvision.models.resnet18, num_classes=spec["classes"])
    if name == "efficientnet-b4":
        return tv_model(torchvision.models.efficientnet_b4, num_classes=spec["classes"])
    if name == "maskrcnn-r50-fpn":
        # As torchvision's maskrcnn_resnet50_fpn and MLPerf train it:
        # frozen batch norm in the backbone, stem and layer1 frozen
        # (trainable_layers 3), here without pretrained weights.
        from torchvision.models.detection import MaskRCNN
        from torchvision.models.detection.backbone_utils import resnet_fpn_backbone
        try:
            backbone = resnet_fpn_backbone(backbone_name="resnet50", weights=None, trainable_layers=3)
        except TypeError:
            backbone = resnet_fpn_backbone("resnet50", pretrained=False, trainable_layers=3)
        h, w = image_size(name, a)
        return MaskRCNN(backbone, num_classes=spec["classes"], min_size=min(h, w), max_size=max(h, w))
    if name == "transformer-base":
        return Seq2Seq(a.vocab, a.seq_len)
    if spec["task"] == "lm":
        layers, d, heads = spec["gpt"]
        return make_gpt_class()(layers, d, heads)
    if spec["task"] == "qa":
        layers, d, heads = spec["bert"]
        return make_bert_class()(layers, d, heads)
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))
    if name == "cnn":
        return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(12 * 12 * 64, 128), nn.ReLU(), nn.Linear(128, 10))
    raise ValueError("unknown model %r" % name)


def make_seq2seq_class():
    import torch.nn as nn

    class Seq2Seq(nn.Module):
        """Transformer base (Vaswani et al. 2017): post-norm encoder-decoder,
        sinusoidal positions, one embedding shared by source, target and the
        output projection, no final layer norms (as fairseq's
        transformer_wmt_en_de)."""

        def __init__(self, vocab, seq_len, d=512, heads=8, layers=6, ffn=2048, dropout=0.1):
            super().__init__()
            enc_layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout, batch_first=True)
            dec_layer = nn.TransformerDecoderLayer(d, heads, ffn, dropout, batch_first=True)
            try:
                enc = nn.TransformerEncoder(enc_layer, layers, norm=None, enable_nested_tensor=False)
            except TypeError:
                enc = nn.TransformerEncoder(enc_layer, layers, norm=None)
            dec = nn.TransformerDecoder(dec_layer, layers, norm=None)
            self.core = nn.Transformer(d, heads, custom_encoder=enc, custom_decoder=dec, batch_first=True)
            self.embed = nn.Embedding(vocab, d)
            nn.init.normal_(self.embed.weight, 0, d ** -0.5)
            self.out = nn.Linear(d, vocab, bias=False)
            self.out.weight = self.embed.weight
            self.scale = math.sqrt(d)
            pos = torch.arange(seq_len, dtype=torch.float32).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
            pe = torch.zeros(seq_len, d)
            pe[:, 0::2] = torch.sin(pos * div)
            pe[:, 1::2] = torch.cos(pos * div)
            self.register_buffer("pos", pe, persistent=False)
            mask = torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1)
            self.register_buffer("causal", mask, persistent=False)

        def forward(self, src, tgt):
            n = tgt.shape[1]
            s = self.embed(src) * self.scale + self.pos[: src.shape[1]]
            t = self.embed(tgt) * self.scale + self.pos[:n]
            h = self.core(s, t, tgt_mask=self.causal[:n, :n])
            return self.out(h)

    return Seq2Seq


def Seq2Seq(vocab, seq_len):
    return make_seq2seq_class()(vocab, seq_len)


def init_normal(model):
    """Initialise model as BERT and GPT-2 do: every linear layer's and
    embedding's weight from N(0, 0.02), every linear layer's bias 0."""
    nn = torch.nn
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)


def make_bert_class():
    import torch.nn as nn
    import torch.nn.functional as F

    class Layer(nn.Module):
        """A BERT layer as DeepLearningExamples' modeling.py runs it
        eagerly: query, key and value as three products, the scores scaled
        and masked as kernels of their own, softmax (in the scores'
        precision), dropout, the value product; post-norm residuals; GELU
        (erf)."""

        def __init__(self, d, heads, dropout):
            super().__init__()
            self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.attn_out, self.attn_norm = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
            self.inter, self.out, self.out_norm = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d, eps=1e-12)
            self.heads, self.p = heads, dropout

        def forward(self, x, mask):
            b, n, d = x.shape
            dh = d // self.heads
            split = lambda t: t.view(b, n, self.heads, dh).transpose(1, 2)  # noqa: E731
            q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2))
            scores = scores / math.sqrt(dh)
            # The mask, the softmax and the dropout in the scores' precision,
            # as apex's fp16 model runs them under run_squad.py's --fp16 (amp
            # O2): autocast would take float32 for the softmax, and a float32
            # mask would promote the sum.
            scores = scores + mask.to(scores.dtype)
            probs = F.dropout(F.softmax(scores, dim=-1, dtype=scores.dtype), self.p, self.training)
            ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, n, d)
            x = self.attn_norm(x + F.dropout(self.attn_out(ctx), self.p, self.training))
            return self.out_norm(x + F.dropout(self.out(F.gelu(self.inter(x))), self.p, self.training))

    class BertSQuAD(nn.Module):
        """BertForQuestionAnswering without the pooler: word, position and
        token-type embeddings with a LayerNorm, the layers, a d x 2 span
        head; weights N(0, 0.02) as BERT initialises them."""

        def __init__(self, layers, d, heads, dropout=0.1):
            super().__init__()
            self.word, self.pos, self.token_type = nn.Embedding(BERT_VOCAB, d), nn.Embedding(BERT_POSITIONS, d), nn.Embedding(2, d)
            self.norm = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList(Layer(d, heads, dropout) for _ in range(layers))
            self.span = nn.Linear(d, 2)
            self.p = dropout
            init_normal(self)

        def forward(self, ids, types, attention_mask):
            n = ids.shape[1]
            pos = torch.arange(n, device=ids.device)
            x = F.dropout(self.norm(self.word(ids) + self.pos(pos) + self.token_type(types)), self.p, self.training)
            # run_squad.py's extended mask: 0 where attended, -10000 where padded.
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, mask)
            start, end = self.span(x).split(1, dim=-1)
            return start.squeeze(-1), end.squeeze(-1)

    return BertSQuAD


def sdpa():
    """Returns torch's fused scaled_dot_product_attention (torch >= 2.0),
    else None."""
    import torch.nn.functional as F
    return getattr(F, "scaled_dot_product_attention", None)


def make_gpt_class():
    import torch.nn as nn
    import torch.nn.functional as F
    attend = sdpa()

    def gelu(x):
        try:
            return F.gelu(x, approximate="tanh")  # GPT-2's and GPT-3's
        except TypeError:  # torch < 1.12
            return F.gelu(x)

    class Block(nn.Module):
        """A GPT-2/GPT-3 decoder block: x + attn(ln(x)), then x + mlp(ln(x)),
        queries, keys and values from one product, causal attention by
        torch's fused scaled_dot_product_attention where it has one (torch
        >= 2.0, which picks FlashAttention or its memory-efficient kernel
        on CUDA), else as two products and a softmax."""

        def __init__(self, d, heads, dropout):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.heads, self.p = heads, dropout

        def forward(self, x, causal):
            b, n, d = x.shape
            p = self.p if self.training else 0.0
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = [t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v)]
            if attend is not None:
                y = attend(q, k, v, dropout_p=p, is_causal=True)
            else:
                s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads)) + causal[:n, :n]
                y = F.dropout(s.softmax(dim=-1), p, self.training) @ v
            y = y.transpose(1, 2).reshape(b, n, d)
            x = x + F.dropout(self.proj(y), p, self.training)
            return x + F.dropout(self.out(gelu(self.fc(self.ln2(x)))), p, self.training)

    class GPT(nn.Module):
        """A GPT-3 shape (Brown et al. 2020, Table 2.1), as GPT-2 builds it:
        token and learned position embeddings, the blocks, a final
        LayerNorm and logits by the tied token table; weights N(0, 0.02)."""

        def __init__(self, layers, d, heads, dropout=0.1):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(GPT_VOCAB, d), nn.Embedding(GPT_CONTEXT, d)
            self.blocks = nn.ModuleList(Block(d, heads, dropout) for _ in range(layers))
            self.ln_f = nn.LayerNorm(d)
            self.p = dropout
            init_normal(self)
            causal = None
            if attend is None:
                causal = torch.triu(torch.full((GPT_CONTEXT, GPT_CONTEXT), float("-inf")), diagonal=1)
            self.register_buffer("causal", causal, persistent=False)

        def forward(self, idx):
            n = idx.shape[1]
            pos = torch.arange(n, device=idx.device)
            x = F.dropout(self.wte(idx) + self.wpe(pos), self.p, self.training)
            for blk in self.blocks:
                x = blk(x, self.causal)
            return F.linear(self.ln_f(x), self.wte.weight)

    return GPT


def image_size(name, a):
    spec = MODELS[name]
    if spec.get("fixed") or spec["image"] is None or not a.image_size:
        return spec["image"]
    return (a.image_size, a.image_size)


def input_label(name, a):
    spec = MODELS[name]
    if spec["task"] == "translate":
        return "2x%d tokens" % a.seq_len
    if spec["task"] in ("lm", "qa"):
        return "%d tokens" % a.seq_len
    h, w = image_size(name, a)
    return "%dx%dx%d" % (spec["channels"], h, w)


def make_optimizer(name, model):
    """Returns the optimizer of name's training, what it is in words, and
    its learning-rate schedule, stepped after each update (None for a
    constant rate)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if MODELS[name]["task"] == "translate":
        return torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.98), eps=1e-9), "adam lr 1e-4 betas (0.9, 0.98)", None
    if MODELS[name]["task"] == "detect":
        # torchvision's detection reference (references/detection/train.py:
        # SGD, lr 0.02, momentum 0.9, weight decay 1e-4, and in the first
        # epoch a linear warm-up from a thousandth of the rate over 1,000
        # steps). At 0.01 from the first step, the randomly initialised
        # Mask R-CNN diverges after one update: its losses go to nan, the
        # RPN proposes nothing and the heads run on the ground truth's
        # boxes alone, a step that is not Mask R-CNN's.
        opt = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
        return (opt, "sgd lr 0.02 momentum 0.9 wd 1e-4, linear warm-up from 0.001 over 1000 steps",
                torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.001, total_iters=1000))
    if MODELS[name]["task"] == "qa":
        # run_squad.sh's learning rate; BERT's decay of 0.01.
        return (torch.optim.AdamW(params, lr=3e-5, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01),
                "adamw lr 3e-5 betas (0.9, 0.999) wd 0.01", None)
    if MODELS[name]["task"] == "lm":
        # GPT-3's (Brown et al. 2020, Appendix B): beta2 0.95, eps 1e-8,
        # weight decay 0.1; the learning rate of GPT-3 Small.
        return (torch.optim.AdamW(params, lr=6e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1),
                "adamw lr 6e-4 betas (0.9, 0.95) wd 0.1", None)
    return torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4), "sgd lr 0.01 momentum 0.9 wd 1e-4", None


# ---------------------------------------------------------------- data


class Synthetic:
    """One batch made on the device once and fed at every step."""

    def __init__(self, name, a, batch, dev, gen):
        spec = MODELS[name]
        self.name = name
        if spec["task"] == "translate":
            self.src = torch.randint(1, a.vocab, (batch, a.seq_len), device=dev, generator=gen)
            tgt = torch.randint(1, a.vocab, (batch, a.seq_len + 1), device=dev, generator=gen)
            self.tgt_in, self.tgt_out = tgt[:, :-1].contiguous(), tgt[:, 1:].contiguous()
        elif spec["task"] == "lm":
            seq = torch.randint(0, GPT_VOCAB, (batch, a.seq_len + 1), device=dev, generator=gen)
            self.tokens, self.targets = seq[:, :-1].contiguous(), seq[:, 1:].contiguous()
        elif spec["task"] == "qa":
            # A question and its context, no padding (a mask of ones), and a
            # span's start and end positions.
            self.ids = torch.randint(0, BERT_VOCAB, (batch, a.seq_len), device=dev, generator=gen)
            self.types = torch.randint(0, 2, (batch, a.seq_len), device=dev, generator=gen)
            self.mask = torch.ones(batch, a.seq_len, dtype=torch.long, device=dev)
            self.start = torch.randint(0, a.seq_len, (batch,), device=dev, generator=gen)
            self.end = torch.randint(0, a.seq_len, (batch,), device=dev, generator=gen)
        elif spec["task"] == "detect":
            h, w = image_size(name, a)
            self.images, self.targets = [], []
            for _ in range(batch):
                self.images.append(torch.rand(3, h, w, device=dev, generator=gen))
                self.targets.append(detection_target(h, w, spec["classes"], dev, gen))
        else:
            h, w = image_size(name, a)
            x = torch.randn(batch, spec["channels"], h, w, device=dev, generator=gen)
            if a.channels_last and spec["conv"]:
                x = x.contiguous(memory_format=torch.channels_last)
            self.x = x
            self.y = torch.randint(0, spec["classes"], (batch,), device=dev, generator=gen)

    def next(self):
        return self

    def close(self):
        pass


def detection_target(h, w, classes, dev, gen, n=4):
    """n random boxes of 10-40% of the image side, their labels, and
    rectangular masks filling them."""
    g = lambda *s: torch.rand(*s, device=dev, generator=gen)  # noqa: E731
    bw, bh = (0.1 + 0.3 * g(n)) * w, (0.1 + 0.3 * g(n)) * h
    x1, y1 = g(n) * (w - bw), g(n) * (h - bh)
    boxes = torch.stack([x1, y1, x1 + bw, y1 + bh], dim=1)
    labels = torch.randint(1, classes, (n,), device=dev, generator=gen)
    masks = torch.zeros(n, h, w, dtype=torch.uint8, device=dev)
    for i, b in enumerate(boxes.round().long().tolist()):
        masks[i, b[1]:b[3], b[0]:b[2]] = 1
    return dict(boxes=boxes, labels=labels, masks=masks)


class Folder:
    """Batches of images from a torchvision ImageFolder, copied to the device."""

    def __init__(self, name, a, batch, dev, rank, world):
        import torchvision
        import torchvision.transforms as T
        spec = MODELS[name]
        h, w = image_size(name, a)
        if spec["channels"] == 1:
            tf = T.Compose([T.Grayscale(1), T.Resize((h, w)), T.ToTensor()])
        else:
            tf = T.Compose([T.RandomResizedCrop((h, w)), T.RandomHorizontalFlip(), T.ToTensor(),
                            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        ds = torchvision.datasets.ImageFolder(a.data_dir, transform=tf)
        if len(ds) < batch * world:
            raise ValueError("--data-dir %s holds %d images, fewer than one global batch of %d"
                             % (a.data_dir, len(ds), batch * world))
        if len(ds.classes) > spec["classes"]:
            raise ValueError("--data-dir %s holds %d classes, more than %s's %d outputs"
                             % (a.data_dir, len(ds.classes), name, spec["classes"]))
        self.sampler = None
        if world > 1:
            from torch.utils.data.distributed import DistributedSampler
            self.sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, seed=a.seed)
        self.loader = torch.utils.data.DataLoader(
            ds, batch_size=batch, shuffle=self.sampler is None, sampler=self.sampler, drop_last=True,
            num_workers=a.loader_workers, pin_memory=dev.type == "cuda",
            persistent_workers=a.loader_workers > 0)
        self.dev, self.cl = dev, a.channels_last and spec["conv"]
        self.epoch, self.it = 0, iter(self.loader)

    def next(self):
        try:
            x, y = next(self.it)
        except StopIteration:
            self.epoch += 1
            if self.sampler is not None:
                self.sampler.set_epoch(self.epoch)
            self.it = iter(self.loader)
            x, y = next(self.it)
        x = x.to(self.dev, non_blocking=True)
        if self.cl:
            x = x.contiguous(memory_format=torch.channels_last)
        self.x, self.y = x, y.to(self.dev, non_blocking=True)
        return self

    def close(self):
        self.it = None
        self.loader = None


def compute_loss(name, model, b, a):
    import torch.nn.functional as F
    task = MODELS[name]["task"]
    if task == "translate":
        logits = model(b.src, b.tgt_in)
        # Under autocast cross_entropy computes in float32 by itself.
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), b.tgt_out.reshape(-1), label_smoothing=0.1)
    if task == "qa":
        # run_squad.py's loss: the mean of the start's and the end's.
        start, end = model(b.ids, b.types, b.mask)
        return (F.cross_entropy(start, b.start) + F.cross_entropy(end, b.end)) / 2
    if task == "lm":
        logits = model(b.tokens)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), b.targets.reshape(-1))
    if task == "detect":
        losses = model(b.images, b.targets)
        return sum(losses.values())
    return F.cross_entropy(model(b.x), b.y)


# ---------------------------------------------------------------- timing


class CPUTimer:
    """Wall-clock marks with time.perf_counter; on the CPU a step runs
    synchronously, so a mark is taken when the work before it is done."""

    def __init__(self):
        self.marks, self.steps = [], []

    def reset(self):
        self.steps = []

    def start_step(self):
        self.marks = []

    def mark(self):
        self.marks.append(time.perf_counter())

    def end_step(self):
        self.steps.append(self.marks)

    def intervals(self):
        """Returns, for every step, the seconds between its marks."""
        return [[m[i + 1] - m[i] for i in range(len(m) - 1)] for m in self.steps]


class CUDATimer(CPUTimer):
    """CUDA events recorded on the current stream and read after one final
    synchronisation, so that timing does not stall the device."""

    def mark(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        self.marks.append(e)

    def intervals(self):
        torch.cuda.synchronize()
        return [[m[i].elapsed_time(m[i + 1]) / 1e3 for i in range(len(m) - 1)] for m in self.steps]


def is_oom(e):
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(e, oom_type):
        return True
    msg = str(e)
    return isinstance(e, RuntimeError) and (
        "out of memory" in msg or "can't allocate memory" in msg or "CUBLAS_STATUS_ALLOC_FAILED" in msg)


def peak_reset(dev):
    gc.collect()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.empty_cache()
    peak_restart(dev)


def peak_restart(dev):
    """Restarts the peak from what is in use now, between warm-up and
    timed steps; unlike peak_reset it frees no cached memory, so the timed
    steps allocate nothing anew."""
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
        return
    try:  # Linux: reset the process's peak resident set size (VmHWM)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_read(dev):
    if dev.type == "cuda":
        return float(torch.cuda.max_memory_allocated(dev))
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    except (ImportError, OSError):
        return 0.0


# ---------------------------------------------------------------- training


class Trainer:
    """One model at one precision on this worker."""

    def __init__(self, name, prec, a, dev, rank, world):
        self.name, self.prec, self.a, self.dev, self.world = name, prec, a, dev, world
        self.fake_oom = False
        if dev.type == "cuda":
            tf32 = prec == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
        torch.manual_seed(a.seed)  # the same initial weights on every worker
        model = build_model(name, a)
        self.params = sum(p.numel() for p in model.parameters())
        self.trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        model = model.to(dev)
        if a.channels_last and MODELS[name]["conv"]:
            model = model.to(memory_format=torch.channels_last)
        model.train()
        # Mask R-CNN: the positive RoIs its heads sampled (on the device,
        # summed since the last count_rois) and the images they came from.
        self.positives, self.images = None, 0
        if MODELS[name]["task"] == "detect":
            self.count_positives(model.roi_heads)
        self.opt, self.opt_about, self.sched = make_optimizer(name, model)
        self.loss = None  # the last step's, on the device
        self.fake_nan = False
        self.ddp = None
        if world > 1:
            from torch.nn.parallel import DistributedDataParallel as DDP
            kw = dict(gradient_as_bucket_view=True)
            if dev.type == "cuda":
                kw["device_ids"] = [dev.index]
            self.ddp = model = DDP(model, **kw)
        self.model = model
        self.fwd = torch.compile(model) if a.compile else model
        self.autocast = None
        if prec == "amp-fp16":
            self.autocast = (dev.type, torch.float16)
        elif prec == "amp-bf16":
            self.autocast = (dev.type, torch.bfloat16)
        self.scaler = None
        if prec == "amp-fp16":
            self.scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else \
                torch.cuda.amp.GradScaler()

    def step(self, data, timer, sync=True):
        """One training step with marks: start, data ready, forward and
        loss done, backward done, update done."""
        timer.start_step()
        timer.mark()
        b = data.next()
        timer.mark()
        ctx = self.ddp.no_sync() if (self.ddp is not None and not sync) else contextlib.nullcontext()
        with ctx:
            if self.autocast:
                with torch.autocast(device_type=self.autocast[0], dtype=self.autocast[1]):
                    loss = compute_loss(self.name, self.fwd, b, self.a)
            else:
                loss = compute_loss(self.name, self.fwd, b, self.a)
            timer.mark()
            if self.fake_oom:
                raise RuntimeError("CUDA out of memory (simulated by %s)" % TEST_OOM)
            if self.fake_nan:
                loss = loss * float("nan")
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
            timer.mark()
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        if self.sched is not None:
            self.sched.step()
        self.opt.zero_grad(set_to_none=True)
        self.loss = loss.detach()
        timer.mark()
        timer.end_step()

    def count_positives(self, heads):
        """Wraps RoIHeads.select_training_samples to add up the positive
        RoIs it samples (labels above 0, which the mask head runs on), on
        the device, so that counting makes the host wait for nothing."""
        select = heads.select_training_samples

        def counted(proposals, targets):
            out = select(proposals, targets)
            labels = out[2]
            n = torch.stack([(l > 0).sum() for l in labels]).sum()
            self.positives = n if self.positives is None else self.positives + n
            self.images += len(labels)
            return out

        heads.select_training_samples = counted

    def count_rois(self):
        """Returns the positive RoIs an image since the last call, rounded,
        at least 1, and starts counting afresh; None for a model without
        RoI heads or no step."""
        n = None
        if self.positives is not None and self.images > 0:
            n = max(1, int(round(float(self.positives) / self.images)))
        self.positives, self.images = None, 0
        return n

    def diverged(self):
        """Reports whether the last step's loss is not finite: training
        that has diverged runs another step than the model's (no
        proposals, nan everywhere), which no record should time. It reads
        the loss from the device after the timed steps."""
        return self.loss is not None and not bool(torch.isfinite(self.loss).all())

    def steps(self, data, timer, n, sync=True):
        timer.reset()
        for _ in range(n):
            self.step(data, timer, sync)
        return timer.intervals()

    def close(self):
        self.opt.zero_grad(set_to_none=True)
        self.fwd = self.ddp = self.opt = self.scaler = self.sched = self.loss = None


def agree(flag, dev, world):
    """Returns whether any worker raised flag."""
    if world == 1:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=dev)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return t.item() > 0


def reduce_max(values, dev, world):
    """Element-wise maximum over workers: a synchronous step lasts as long
    as its slowest worker."""
    if world == 1 or not values:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=dev)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return t.tolist()


def mean_std(xs):
    m = statistics.fmean(xs)
    s = statistics.stdev(xs, m) if len(xs) > 1 else 0.0
    return m, s


def trial(tr, name, a, batch, dev, rank, world, gen, timer):
    """Measures one batch: warm-up steps, then timed steps (and, with
    several workers, timed steps under no_sync). Returns a dict of results,
    or a str saying why it ran out of memory."""
    peak_reset(dev)
    if a.compile:
        # Each batch compiles afresh: torch 2.11's inductor failed to
        # recompile a compiled model for a second batch size in one process
        # ("trying to set the current FakeTensorMode, but one already exists").
        torch._dynamo.reset()
        tr.fwd = torch.compile(tr.model)
    tr.fake_oom = test_oom(batch, rank)
    tr.fake_nan = test_nan(batch)
    data, failed = None, ""
    try:
        if a.data_dir:
            data = Folder(name, a, batch, dev, rank, world)
        else:
            data = Synthetic(name, a, batch, dev, gen)
        if world > 1:
            # A probe step without gradient synchronisation finds an
            # out-of-memory on any worker before the workers wait on each
            # other in an all-reduce; it counts as a warm-up step.
            tr.steps(data, timer, 1, sync=False)
    except Exception as e:
        if not is_oom(e):
            raise
        failed = first_line(e)
    if agree(bool(failed), dev, world):
        return failed or "out of memory on another worker"
    if world > 1:
        with torch.no_grad():  # undo the probe's local update
            for p in tr.ddp.module.parameters():
                torch.distributed.broadcast(p, 0)
    sync = nosync = prof = rois = None
    try:
        warm = a.warmup - 1 if world > 1 else a.warmup
        if warm > 0:
            tr.steps(data, timer, warm)
        # The peak counts the timed steps only: in the first warm-up step
        # cudnn.benchmark tries convolution algorithms with workspaces far
        # larger than training keeps (gigabytes at batch 1).
        peak_restart(dev)
        tr.count_rois()  # count the timed steps alone
        sync = tr.steps(data, timer, a.steps)
        rois = tr.count_rois()
        if world > 1:
            nosync = tr.steps(data, timer, a.steps, sync=False)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        if a.profile:
            prof = profile_steps(tr, data, timer, dev)
    except Exception as e:
        if not is_oom(e):
            raise
        failed = first_line(e)
    data.close()
    data = None
    if agree(bool(failed), dev, world):
        return failed or "out of memory on another worker"
    if agree(tr.diverged(), dev, world):
        raise RuntimeError("training diverged at batch %d: the loss is not finite after the timed steps, "
                           "so they timed another step than the model's" % batch)
    res = dict(peak=max(reduce_max([peak_read(dev)], dev, world)))
    res["step"] = reduce_max([sum(iv) for iv in sync], dev, world)
    phases = [statistics.fmean(iv[k] for iv in sync) for k in range(4)]
    res["phases"] = dict(data_wait_s=phases[0], forward_s=phases[1], backward_s=phases[2], update_s=phases[3])
    if nosync is not None:
        res["nosync"] = reduce_max([sum(iv) for iv in nosync], dev, world)
    if prof is not None:
        res["profile"] = prof
    if rois is not None:
        res["positive_rois"] = rois
    return res


# PROFILE_STEPS is the steps run under torch.profiler for --profile, after
# the timed steps (the profiler's own cost stays out of the step times).
PROFILE_STEPS = 3


# ATTENTION_OPS are the fused attention operators whose FLOPs torch.profiler
# does not count (its with_flops covers the matrix products and
# convolutions), by name: the index of the query and of the key among their
# inputs, whether those are (batch, heads, tokens, head) rather than
# (batch, tokens, heads, head), and the FLOPs as a multiple of the
# forward's two products. The backward's 2.5 counts its recomputed scores
# (FlashAttention: Dao et al. 2022, Section 3.1), as the operator model
# does.
ATTENTION_OPS = {
    "aten::_scaled_dot_product_flash_attention": (0, 1, True, 1.0),
    "aten::_scaled_dot_product_efficient_attention": (0, 1, True, 1.0),
    "aten::_scaled_dot_product_cudnn_attention": (0, 1, True, 1.0),
    "aten::_scaled_dot_product_flash_attention_backward": (1, 2, True, 2.5),
    "aten::_scaled_dot_product_efficient_attention_backward": (1, 2, True, 2.5),
    "aten::_scaled_dot_product_cudnn_attention_backward": (1, 2, True, 2.5),
    "aten::_flash_attention_forward": (0, 1, False, 1.0),
    "aten::_efficient_attention_forward": (0, 1, False, 1.0),
    "aten::_flash_attention_backward": (1, 2, False, 2.5),
    "aten::_efficient_attention_backward": (1, 2, False, 2.5),
}


def attention_flops(name, shapes):
    """Returns the FLOPs of one call of the fused attention operator name
    on inputs of shapes, all causal or not alike: 4 multiply-adds' worth
    per query value and key token, 2·2·numel(query)·key tokens, times the
    operator's multiple; 0 for another operator or shapes it cannot read."""
    spec = ATTENTION_OPS.get(name)
    if spec is None:
        return 0.0
    qi, ki, heads_first, mult = spec
    if len(shapes) <= max(qi, ki) or len(shapes[qi]) != 4 or len(shapes[ki]) != 4:
        return 0.0
    numel = 1
    for n in shapes[qi]:
        numel *= n
    keys = shapes[ki][2] if heads_first else shapes[ki][1]
    return 4.0 * numel * keys * mult


def profile_steps(tr, data, timer, dev):
    """Runs PROFILE_STEPS steps under torch.profiler and returns its
    per-operator table (key_averages), per step: calls, CPU time (self and
    total), self device time and FLOPs, most device time first. The FLOPs
    are those torch counts (with_flops: the matrix products and
    convolutions), and for the fused attention operators it does not count
    those of their shapes (attention_flops)."""
    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=acts, with_flops=True, record_shapes=True) as prof:
        tr.steps(data, timer, PROFILE_STEPS)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
    attn = {}
    for e in prof.key_averages(group_by_input_shape=True):
        f = attention_flops(e.key, getattr(e, "input_shapes", None) or [])
        if f > 0:
            attn[e.key] = attn.get(e.key, 0.0) + f * e.count
    ops = []
    for e in prof.key_averages():
        device_us = getattr(e, "self_device_time_total", None)
        if device_us is None:  # torch < 2.4
            device_us = getattr(e, "self_cuda_time_total", 0)
        flops = float(getattr(e, "flops", 0) or 0) or attn.get(e.key, 0.0)
        ops.append(dict(name=e.key, calls=e.count / PROFILE_STEPS,
                        self_cpu_s=e.self_cpu_time_total * 1e-6 / PROFILE_STEPS,
                        cpu_s=e.cpu_time_total * 1e-6 / PROFILE_STEPS,
                        self_device_s=device_us * 1e-6 / PROFILE_STEPS,
                        flops=flops / PROFILE_STEPS))
    ops.sort(key=lambda o: (-o["self_device_s"], -o["self_cpu_s"], o["name"]))
    return ops


# TEST_OOM names an environment variable for tests: "B" or "B:R" makes
# every training step at a per-device batch >= B (on rank R only, with
# ":R") raise the error CUDA raises when out of memory, so that the
# out-of-memory path can be tested on the CPU.
TEST_OOM = "TORCHBENCH_TEST_OOM"


def test_oom(batch, rank):
    spec = os.environ.get(TEST_OOM, "")
    if not spec:
        return False
    b, _, r = spec.partition(":")
    return batch >= int(b) and (r == "" or int(r) == rank)


# TEST_NAN names an environment variable for tests: "B" makes every
# training step at a per-device batch >= B return a nan loss, so that the
# divergence check can be tested on the CPU.
TEST_NAN = "TORCHBENCH_TEST_NAN"


def test_nan(batch):
    spec = os.environ.get(TEST_NAN, "")
    return bool(spec) and batch >= int(spec)


def first_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:300]


def free(dev):
    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def fmt_bytes(b):
    return "%.1f MiB" % (b / 2 ** 20)


def sweep(name, prec, a, dev, rank, world, base, info, records):
    """Measures one model at one precision over the batches. Returns why
    it failed for a reason other than memory, or ""."""
    spec = MODELS[name]
    labels = {"input": input_label(name, a)}
    if spec["task"] == "translate":
        labels["sample"] = "sentence-pair"
    if spec["task"] == "lm":
        labels["seq_len"] = str(a.seq_len)
        if sdpa() is not None:
            labels["attention"] = "sdpa"
    if spec["task"] == "qa":
        labels["seq_len"] = str(a.seq_len)
    if a.channels_last and spec["conv"]:
        labels["channels_last"] = "true"
    elif a.channels_last:
        progress("%s: --channels-last does not apply (no convolutions)" % name)
    if a.compile:
        labels["compile"] = "true"
    if a.data_dir:
        labels["data"] = "imagefolder"
    common = dict(base, model=name, precision=prec, workers=world, nodes=a.nodes, devices_per_node=world // a.nodes,
                  labels=labels)
    if world > 1:
        common["transport"] = a.backend
    timer = CUDATimer() if dev.type == "cuda" else CPUTimer()
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed + 1000 * rank)
    tr = None
    try:
        oom = ""
        try:
            tr = Trainer(name, prec, a, dev, rank, world)
        except Exception as e:
            if not is_oom(e):
                raise
            oom = first_line(e)
        if agree(bool(oom), dev, world):
            tr = None
            free(dev)
            records.append(dict(common, kind="oom", batch=a.batch[0], global_batch=a.batch[0] * world,
                                error="building the model: " + (oom or "out of memory on another worker")))
            progress("%s %s: out of memory building the model" % (name, prec))
            return ""
        info[name] = dict(params=tr.params, trainable_params=tr.trainable, input=labels["input"],
                          optimizer=tr.opt_about,
                          task=spec["task"], about=spec["about"])
        for batch in a.batch:
            gb = batch * world
            res = trial(tr, name, a, batch, dev, rank, world, gen, timer)
            if isinstance(res, str):
                tr.close()
                tr = None
                free(dev)
                records.append(dict(common, kind="oom", batch=batch, global_batch=gb, error=res))
                progress("%s %s batch %d x%d: out of memory; skipping larger batches (%s)" % (
                    name, prec, batch, world, res))
                break
            m, s = mean_std(res["step"])
            phases = res["phases"]
            if not a.data_dir:
                del phases["data_wait_s"]
            extra = ""
            if "nosync" in res:
                ns = statistics.fmean(res["nosync"])
                phases["allreduce_s"] = max(0.0, m - ns)
                extra = ", no-sync step %.4g s, all-reduce ~%.3g s" % (ns, phases["allreduce_s"])
            if a.step_records:
                for i, t in enumerate(res["step"]):
                    records.append(dict(common, kind="step", batch=batch, global_batch=gb, step=i + 1,
                                        step_time_s=t, samples_per_s=gb / t))
            rec = dict(common, kind="measurement", batch=batch, global_batch=gb, steps=a.steps,
                       step_time_s=m, step_time_std_s=s, samples_per_s=gb / m, phases=phases,
                       peak_memory_bytes=res["peak"])
            if "positive_rois" in res:
                rec["labels"] = dict(labels, positive_rois=str(res["positive_rois"]))
            records.append(rec)
            if "profile" in res:
                PROFILES.append(dict(model=name, precision=prec, batch=batch, labels=labels, step_time_s=m,
                                     steps=PROFILE_STEPS, ops=res["profile"]))
            progress("%s %s batch %d x%d: %.4g s/step (sd %.2g), %.1f samples/s, peak %s%s" % (
                name, prec, batch, world, m, s, gb / m, fmt_bytes(res["peak"]), extra))
        return ""
    except Exception as e:
        if world > 1:
            raise
        progress("%s %s failed:\n%s" % (name, prec, traceback.format_exc()), always=True)
        return first_line(e)
    finally:
        if tr is not None:
            tr.close()
        free(dev)


# ---------------------------------------------------------------- output


# The fields of internal/benchlog's Record, in its order; any other field is
# an error (the Go reader rejects unknown fields).
FIELDS = ["kind", "run", "tool", "machine", "config", "model", "device", "precision", "transport", "workers",
          "nodes", "devices_per_node", "batch", "global_batch", "accumulate", "step", "steps", "step_time_s", "step_time_std_s", "phases",
          "samples_per_s", "peak_memory_bytes", "target", "accuracy", "reached", "steps_to_target",
          "learning_rate", "labels", "error"]
PHASES = ["data_wait_s", "forward_s", "backward_s", "allreduce_s", "update_s"]


def clean(rec):
    """Orders a record's fields as benchlog does and drops empty ones, as
    the Go writer's omitempty does; keeps an all-reduce share of 0 so that
    it reads as measured."""
    unknown = set(rec) - set(FIELDS)
    if unknown or set(rec.get("phases", {})) - set(PHASES):
        raise ValueError("record with fields outside the bench log schema: %s" % sorted(unknown))
    out = {}
    for k in FIELDS:
        v = rec.get(k)
        if k == "phases" and v:
            v = {p: v[p] for p in PHASES if p in v and (v[p] != 0 or p == "allreduce_s")}
        if v is None or (k != "config" and (v == "" or v == 0 or v == {} or v == [])):
            continue
        out[k] = v
    return out


# PROFILES collects the per-operator profiles of --profile, one per batch.
PROFILES = []


def profile_path(out):
    """The profile's file beside the bench log OUT: its name with
    .profile.json in place of .jsonl (or added)."""
    root, ext = os.path.splitext(out)
    return (root if ext == ".jsonl" else out) + ".profile.json"


def write_json(obj, path):
    write_text(json.dumps(obj, allow_nan=False, indent=1) + "\n", path)


def write_records(records, path):
    lines = "".join(json.dumps(clean(r), allow_nan=False, sort_keys=False) + "\n" for r in records)
    if not path:
        sys.stdout.write(lines)
        sys.stdout.flush()
        return
    write_text(lines, path)


def write_text(lines, path):
    """Writes lines to path atomically."""
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + base + ".tmp", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(lines)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


# ---------------------------------------------------------------- main


def worker(a, argv, rank, world, local_rank):
    global RANK
    RANK = rank
    if a.device == "cuda":
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
        torch.backends.cudnn.benchmark = True
    else:
        dev = torch.device("cpu")
    if world != a.nodes * a.nproc:
        progress("world of %d workers, not --nodes %d x --nproc %d: every node must run the same --nproc"
                 % (world, a.nodes, a.nproc), always=True)
        return EXIT_USAGE
    if world > 1:
        torch.distributed.init_process_group(a.backend, rank=rank, world_size=world,
                                             timeout=datetime.timedelta(seconds=a.dist_timeout))
    threads = default_threads(a, a.nproc)
    if threads:
        torch.set_num_threads(threads)
    device_name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    base = dict(run=a.run, device=device_name)
    records, info, failed = [], {}, []
    interrupted, name, prec = "", "", ""
    costs = None  # the host's, measured after the sweep (host_costs)
    if world == 1:
        # A single worker that is told to stop (timeout(1), a batch
        # scheduler's time limit, ^C) still writes what it measured. With
        # several workers a signal ends them as torchrun decides.
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    try:
        for name in a.model:
            for prec in a.precision:
                err = sweep(name, prec, a, dev, rank, world, base, info, records)
                if err:
                    failed.append("%s %s (%s)" % (name, prec, err))
        costs = measure_host(a, dev, rank)
    except Interrupted as e:
        interrupted = str(e)
        failed.append("interrupted by %s during %s %s" % (e, name, prec))
        progress("interrupted by %s during %s %s; writing the %d records measured" % (
            e, name, prec, len(records)))
    finally:
        if world == 1:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    hosts = node_hosts(a, rank, world)
    if rank == 0:
        import torchvision
        config = {k: v for k, v in vars(a).items() if k not in ("list_models", "list_precisions", "out", "run")}
        if world > 1:
            config.update(rendezvous="%s:%s" % (os.environ.get("MASTER_ADDR", ""), os.environ.get("MASTER_PORT", "")),
                          node_hosts=hosts)
        config.update(
            argv=list(argv), workers=world, threads=torch.get_num_threads(),
            launcher=os.environ.get("TORCHBENCH_LAUNCHER", "none") if world > 1 else "none",
            python=platform.python_version(), torch=torch.__version__, torchvision=torchvision.__version__,
            models_info=info,
            timing="CUDA events on the current stream" if dev.type == "cuda" else "time.perf_counter",
            peak_memory="torch.cuda.max_memory_allocated over the timed steps (reset_peak_memory_stats after the warm-up)"
            if dev.type == "cuda" else "process peak resident set size (VmHWM) over the timed steps (reset after the warm-up)",
            cudnn_benchmark=bool(dev.type == "cuda"),
            omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""))
        if interrupted:
            config["interrupted"] = "%s during %s %s" % (interrupted, name, prec)
        m = machine(a, world)
        if costs:
            m["host_costs"] = costs
        header = dict(kind="header", run=a.run, tool=TOOL, machine=m, config=config)
        write_records([header] + records, a.out)
        if a.out:
            progress("wrote %d records to %s" % (len(records) + 1, a.out))
        if a.profile:
            path = profile_path(a.out)
            write_json(dict(kind="torch-profile", run=a.run, tool=TOOL, device=device_name, torch=torch.__version__,
                            profiles=PROFILES), path)
            progress("wrote the per-operator profiles of %d batches to %s" % (len(PROFILES), path))
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    if failed:
        progress("%d configuration%s failed: %s" % (len(failed), "" if len(failed) == 1 else "s", "; ".join(failed)))
        return EXIT_FAILED
    return 0


def node_hosts(a, rank, world):
    """Returns the host name of every node, by node rank (on rank 0; a
    collective that every worker calls)."""
    if world == 1:
        return [platform.node()]
    names = [None] * world
    torch.distributed.all_gather_object(names, platform.node())
    return [names[n * a.nproc] for n in range(a.nodes)]


def main(argv):
    p = make_parser()
    a = p.parse_args(argv)
    if a.list_models:
        print("\n".join(MODELS))
        return 0
    if a.list_precisions:
        print("\n".join(PRECISIONS))
        return 0
    check_args(p, a)
    passive_openmp()
    import_torch()
    check_torch_args(p, a)
    if not a.run:
        a.run = "torchbench-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # started by torchrun or spawn
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        return worker(a, argv, rank, world, int(os.environ.get("LOCAL_RANK", rank)))
    if a.nproc * a.nodes > 1:
        return launch(a, argv)
    return worker(a, argv, 0, 1, 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
