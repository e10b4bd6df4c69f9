#!/usr/bin/env python3
"""Host cost of run_squad.py's training step, measured on CPU tensors.

Runs the training step of DeepLearningExamples' PyTorch BERT run_squad.py
(github.com/NVIDIA/DeepLearningExamples at 729963dd,
PyTorch/LanguageModeling/BERT, lines 1054-1105 without --fp16: the model,
the two cross-entropies, loss.backward(), the global-norm clip's gradient
list and .item(), optimization.py's BertAdam, zero_grad and loss.item())
with that checkout's own modeling.py and optimization.py, imported from
--dle, on CPU tensors at one thread. The layers are BERT-large's or -base's
in number but 64 wide over 16 tokens of one sequence, so that the step's
kernels take microseconds and what is timed is the host's work; the Python
objects a step makes do not depend on the widths.

Beside the model the process holds what run_squad.py keeps referenced
through its training loop, at SQuAD v1.1's sizes (its log: 87,599 examples,
88,641 features of 384 tokens): the features (InputFeatures, run_squad.py
lines 101-128: three lists of 384 ints, the tokens, two dicts) after a
pickle round trip, as the program loads its cached features, and the
examples (SquadExample, lines 61-80: the document's words), so that
CPython's full collections traverse what they traverse there. The batches come from
run_squad.py's DataLoader: a TensorDataset of the five tensors, a
RandomSampler, no workers.

Per configuration (layers, batch, steps) it prints one CSV row: the
tracked objects alive after the forward pass, the collections of each
generation over the steps (gc.callbacks) and their time per step, and the
medians of the loader's next() and of each phase of the step, in ms.
Modules the model's files import but the step does not use (apex, amp_C,
boto3, requests, tqdm) are replaced by empty ones when absent, and
F.gelu's approximate=True (the NGC container's PyTorch) is passed as
"tanh" to PyTorch 1.12 and later. Run:

  OMP_WAIT_POLICY=PASSIVE python3 scripts/squadstep.py \\
      --dle DeepLearningExamples/PyTorch/LanguageModeling/BERT > table.csv
"""

import argparse
import gc
import os
import pickle
import platform
import random
import sys
import time
import types

# SQuAD v1.1's training set as run_squad.py reads it (the Lambda logs'
# "training_samples : 87599", "training_features : 88641") and its
# max_seq_length.
EXAMPLES, FEATURES, SEQ = 87599, 88641, 384


class Feature:
    """The fields of run_squad.py's InputFeatures."""

    def __init__(self, i, rng, words):
        used = rng.randint(150, SEQ)
        ids = [rng.randrange(1000, 30522) for _ in range(used)] + [0] * (SEQ - used)
        self.unique_id, self.example_index, self.doc_span_index = 1000000000 + i, i, 0
        self.tokens = [words[t] for t in ids[:used]]
        self.token_to_orig_map = {j: j - 14 for j in range(14, used - 1)}
        self.token_is_max_context = {j: True for j in range(14, used - 1)}
        self.input_ids = ids
        self.input_mask = [1] * used + [0] * (SEQ - used)
        self.segment_ids = [0] * 14 + [1] * (used - 14) + [0] * (SEQ - used)
        self.start_position, self.end_position, self.is_impossible = 5, 7, False


class Example:
    """The fields of run_squad.py's SquadExample."""

    def __init__(self, i, rng, words):
        self.qas_id, self.question_text = "q%d" % i, "question %d" % i
        self.doc_tokens = [words[rng.randrange(len(words))] for _ in range(rng.randint(60, 250))]
        self.orig_answer_text, self.start_position, self.end_position = "a", 3, 4
        self.is_impossible = False


def heap():
    """Builds the features (through pickle) and the examples."""
    rng = random.Random(1)
    words = ["w%d" % i for i in range(30522)]
    feats = pickle.loads(pickle.dumps([Feature(i, rng, words) for i in range(FEATURES)], protocol=4))
    return feats, [Example(i, rng, words) for i in range(EXAMPLES)]


def stub_imports():
    """Installs empty modules for the imports the step does not use."""
    def need(name):
        try:
            __import__(name)
            return False
        except ImportError:
            return True
    for name, attrs in (
        ("boto3", {}), ("requests", {}), ("botocore", {}),
        ("botocore.exceptions", {"ClientError": Exception}),
        ("tqdm", {"tqdm": lambda it=None, *a, **k: it}),
        ("amp_C", {n: None for n in ("multi_tensor_l2norm", "multi_tensor_scale",
                                      "multi_tensor_lamb", "multi_tensor_lamb_stage1_cuda",
                                      "multi_tensor_lamb_stage2_cuda")}),
        ("apex", {}), ("apex.optimizers", {"FusedAdam": object}),
        ("apex.multi_tensor_apply", {"multi_tensor_applier": types.SimpleNamespace(available=False)}),
    ):
        if name in sys.modules or not need(name):
            continue
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod


def patch_gelu(torch):
    """Passes approximate=True to F.gelu as "tanh" where it takes a string."""
    f = torch.nn.functional.gelu

    def gelu(x, approximate="none"):
        if approximate is True:
            approximate = "tanh"
        elif approximate is False:
            approximate = "none"
        return f(x, approximate=approximate)
    try:
        f(torch.zeros(1), approximate="tanh")
    except TypeError:
        return
    torch.nn.functional.gelu = gelu


class Timer:
    """Counts and times collections by generation through gc.callbacks."""

    def __init__(self):
        self.n, self.t, self.t0 = [0, 0, 0], 0.0, 0.0

    def __call__(self, phase, info):
        if phase == "start":
            self.t0 = time.perf_counter()
            return
        self.n[info["generation"]] += 1
        self.t += time.perf_counter() - self.t0


def median_ms(xs):
    return 1e3 * sorted(xs)[len(xs) // 2]


def run(torch, modeling, optimization, loader, layers, steps):
    """Runs steps steps of a layers-deep model; returns the row's fields."""
    torch.manual_seed(1)
    cfg = modeling.BertConfig(vocab_size_or_config_json_file=30528, hidden_size=64,
                              num_hidden_layers=layers, num_attention_heads=16,
                              intermediate_size=256, max_position_embeddings=512)
    model = modeling.BertForQuestionAnswering(cfg)
    model.train()
    named = [(n, p) for n, p in model.named_parameters() if "pooler" not in n]
    nd = ("bias", "LayerNorm.bias", "LayerNorm.weight")
    groups = [{"params": [p for n, p in named if not any(x in n for x in nd)], "weight_decay": 0.01},
              {"params": [p for n, p in named if any(x in n for x in nd)], "weight_decay": 0.0}]
    opt = optimization.BertAdam(groups, lr=3e-5, warmup=0.1, t_total=1000)
    phases = {k: [] for k in ("loader", "forward", "backward", "clip", "bertadam", "zero_grad")}
    batches = iter(loader)
    gc.collect()
    timer = Timer()
    gc.callbacks.append(timer)
    start, alive = time.perf_counter(), 0
    for step in range(steps):
        t = [time.perf_counter()]
        batch = next(batches)
        t.append(time.perf_counter())
        ids, mask, seg, sp, ep = (x[:1, :16].contiguous() if x.dim() == 2 else x[:1].clamp(0, 15)
                                  for x in batch)
        before = len(gc.get_objects()) if step == steps - 1 else 0
        start_logits, end_logits = model(ids, seg, mask)
        ignored = start_logits.size(1)
        sp.clamp_(0, ignored)
        ep.clamp_(0, ignored)
        lf = torch.nn.CrossEntropyLoss(ignore_index=ignored)
        loss = (lf(start_logits, sp) + lf(end_logits, ep)) / 2
        if step == steps - 1:
            alive = len(gc.get_objects()) - before
        t.append(time.perf_counter())
        loss.backward()
        t.append(time.perf_counter())
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        torch.norm(torch.stack([torch.norm(g) for g in grads])).item()
        t.append(time.perf_counter())
        opt.step()
        t.append(time.perf_counter())
        opt.zero_grad()
        loss.item()
        t.append(time.perf_counter())
        for k, a, b in zip(phases, t, t[1:]):
            phases[k].append(b - a)
    wall = time.perf_counter() - start
    gc.callbacks.remove(timer)
    return [alive, *timer.n, 1e3 * timer.t / steps,
            *(median_ms(v) for v in phases.values()), 1e3 * wall / steps]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dle", required=True, help="DeepLearningExamples' PyTorch/LanguageModeling/BERT")
    ap.add_argument("--configs", default="24:32:101,24:64:101,24:112:101,24:320:270,12:172:101,12:320:270",
                    help="layers:batch:steps, comma-separated")
    args = ap.parse_args()
    stub_imports()
    import torch
    from torch.utils.data import DataLoader, RandomSampler, TensorDataset
    torch.set_num_threads(1)
    patch_gelu(torch)
    sys.path.insert(0, os.path.abspath(args.dle))
    n = FEATURES
    data = TensorDataset(torch.randint(1000, 30522, (n, SEQ)), torch.ones(n, SEQ, dtype=torch.long),
                         torch.zeros(n, SEQ, dtype=torch.long), torch.randint(0, SEQ, (n,)),
                         torch.randint(0, SEQ, (n,)))
    import modeling
    import optimization
    kept = heap()
    full = []
    for _ in range(3):
        t = time.perf_counter()
        gc.collect()
        full.append(time.perf_counter() - t)
    print("# run_squad.py's training step on CPU tensors (scripts/squadstep.py)")
    print("# torch %s, python %s, %s" % (torch.__version__, platform.python_version(), platform.machine()))
    print("# %d tracked objects held (features and examples); a full collection %.3f s (least of 3);"
          " gc thresholds %s; load average %.2f"
          % (len(gc.get_objects()), min(full), gc.get_threshold(), os.getloadavg()[0]))
    print("layers,batch,steps,tracked_after_forward,gen0,gen1,gen2,gc_ms_per_step,"
          "loader_ms,forward_ms,backward_ms,clip_ms,bertadam_ms,zero_grad_ms,step_ms")
    for c in args.configs.split(","):
        layers, batch, steps = (int(x) for x in c.split(":"))
        loader = DataLoader(data, sampler=RandomSampler(data), batch_size=batch)
        row = run(torch, modeling, optimization, loader, layers, steps)
        print(",".join([str(layers), str(batch), str(steps)] + ["%d" % x for x in row[:4]]
                       + ["%.3f" % x for x in row[4:]]), flush=True)
    del kept


if __name__ == "__main__":
    main()
